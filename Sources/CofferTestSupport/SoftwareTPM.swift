import Foundation
import Synchronization

/// A real software TPM 2.0 (`swtpm`, as Debian packages it) for the tests, listening on
/// 127.0.0.1 only, its state in a directory of its own. `tcti` is what tpm2-tss needs to reach
/// it (give it to Coffer as `COFFER_TPM_TCTI`).
///
/// A new `SoftwareTPM` has new seeds: it is another machine's TPM. `restart()` keeps the state
/// (a reboot: the PCRs start from zero again). `stop()` ends it and removes its state.
public final class SoftwareTPM: Sendable {
    /// The executable, when installed.
    public static var executable: String? { Executables.inPath("swtpm") }

    public let stateDirectory: String
    private let running: Mutex<(child: ChildProcess, port: Int)?>

    /// The TCTI configuration for tpm2-tss.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(running.withLock { $0?.port ?? 0 })" }

    /// The environment a Coffer program needs to use this TPM, on top of `base`.
    public func environment(_ base: [String: String] = [:]) -> [String: String] {
        base.merging(["COFFER_TPM_TCTI": tcti]) { $1 }
    }

    public init() throws {
        stateDirectory = NSTemporaryDirectory() + "swtpm-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        running = Mutex(nil)
        do { try start() } catch {
            try? FileManager.default.removeItem(atPath: stateDirectory)
            throw error
        }
    }

    deinit { stop() }

    /// Stops and starts it again with the same state, as a reboot does.
    public func restart() throws {
        running.withLock { if let (child, _) = $0 { _ = child.terminate() }; $0 = nil }
        try start()
    }

    public func stop() {
        running.withLock { if let (child, _) = $0 { _ = child.terminate() }; $0 = nil }
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    /// Starts swtpm on a free pair of ports (the command port and, one above, its control port,
    /// where the TCTI expects it), trying others while a port is taken.
    private func start() throws {
        guard let executable = Self.executable else { throw ChildProcessError.notFound("swtpm") }
        var lastError = ""
        for _ in 0..<20 {
            let port = LoopbackPorts.free(count: 2)
            let child = try ChildProcess(executable, arguments: [
                "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--flags", "not-need-init,startup-clear",
            ], environment: ["PATH": "/usr/bin:/bin"])
            if eventually(timeout: 10, { !child.isRunning || LoopbackPorts.isListening(port) && LoopbackPorts.isListening(port + 1) }), child.isRunning {
                running.withLock { $0 = (child, port) }
                return
            }
            lastError = child.terminate().description
        }
        throw ChildProcessError.failed("swtpm did not start: \(lastError)")
    }
}
