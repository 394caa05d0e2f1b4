// coffer-torture: SIGKILLs a real cofferd at random moments while writers change items over
// D-Bus, and checks after every restart that nothing acknowledged was lost. See `Options.usage`.
import CofferTestSupport
import Dispatch
import Foundation
import Synchronization

/// The temporary directory of the run, removed by the interrupt handler.
let scratch = Mutex<String?>(nil)

/// On SIGINT or SIGTERM: kill cofferd and the bus, remove the temporary directory, leave.
func handleInterrupts() -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            for pid in TortureDaemon.livePIDs.withLock({ $0 }) { kill(pid, SIGKILL) }
            if let directory = scratch.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: directory) }
            FileHandle.standardError.write(Data("coffer-torture: interrupted\n".utf8))
            _exit(3)
        }
        source.resume()
        return source
    }
}

/// Writes `line` to stdout at once (unbuffered, so a reader sees progress as it happens).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Runs the torture; returns the exit status.
func main() -> Int32 {
    guard let options = Options(Array(CommandLine.arguments.dropFirst())) else {
        say(Options.usage)
        return 2
    }
    guard let cofferd = options.cofferd ?? Executables.built("cofferd") else {
        say("coffer-torture: cofferd is not built next to this tool; build it or pass --cofferd PATH")
        return 3
    }
    let root = NSTemporaryDirectory() + "coffer-torture-" + UUID().uuidString
    let dataDirectory = options.dataDirectory ?? root + "/data"
    scratch.withLock { $0 = root }
    var keep = false   // the data, when it is in `root`, after a failure
    defer { if !keep { try? FileManager.default.removeItem(atPath: root) } }
    say("coffer-torture: seed \(options.seed), \(options.kills) kills, \(options.writers) writers, data in \(dataDirectory)")
    let started = Date()
    let torture: Torture
    do {
        try FileManager.default.createDirectory(atPath: root + "/home", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let daemon = try TortureDaemon(executable: cofferd, dataDirectory: dataDirectory, home: root + "/home")
        defer { daemon.shutdown() }
        torture = Torture(options: options, daemon: daemon)
        try torture.run { say("coffer-torture: \($0)") }
    } catch {
        say("coffer-torture: could not run (seed \(options.seed)): \(error)")
        keep = options.dataDirectory == nil
        return 3
    }
    for problem in torture.failures + torture.lost + torture.broken { say("coffer-torture: \(problem)") }
    say("in flight at a kill: \(torture.unacknowledged) (\(torture.inFlightApplied) applied), "
          + "half applied or phantom: \(torture.broken.count), failures: \(torture.failures.count), "
          + "seconds: \(Int(Date().timeIntervalSince(started)))")
    say("kills: \(torture.kills), operations: \(torture.operations), acknowledged: \(torture.acknowledged), lost: \(torture.lost.count)")
    let clean = torture.lost.isEmpty && torture.broken.isEmpty && torture.failures.isEmpty
    if !clean {
        keep = options.dataDirectory == nil
        say("coffer-torture: FAILED (seed \(options.seed)); data kept in \(dataDirectory)")
    }
    return clean ? 0 : 1
}

let interrupts = handleInterrupts()
exit(main())
