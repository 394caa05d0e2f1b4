import CofferTestSupport
import Foundation
import Testing

/// The two ways coffer works, for tests that give both the same inputs: on the store files
/// (`--data-dir`) or through the real cofferd on a private bus. Either way the world starts
/// with a 'login' collection whose password is `loginPassword` (locked on the files,
/// unlocked in the daemon, which is why inputs always carry the password lines: the daemon
/// reads and drops the ones it does not need).
enum Mode: String, CustomStringConvertible, CaseIterable, Sendable {
    case direct
    case daemon

    static let loginPassword = CofferdFixture.loginPassword
    var description: String { rawValue }

    /// Starts this mode's world and returns a way to run coffer in it.
    func start() throws -> ModeWorld {
        switch self {
        case .direct:
            let files = try CLIFixture()
            let world = ModeWorld(mode: self, stop: {}) { arguments, stdin in try files.run(arguments, stdin: stdin) }
            try world.expect(0, ["create-collection", "login", "--password-stdin"], stdin: "\(Self.loginPassword)\n")
            return world
        case .daemon:
            let daemon = try CofferdFixture()
            return ModeWorld(mode: self, stop: { daemon.shutdown() }) { arguments, stdin in
                try daemon.run(arguments, stdin: stdin)
            }
        }
    }
}

/// A started `Mode`: runs coffer there until `stop()`.
final class ModeWorld {
    let mode: Mode
    let stop: () -> Void
    private let runner: ([String], String) throws -> ChildResult

    init(mode: Mode, stop: @escaping () -> Void, runner: @escaping ([String], String) throws -> ChildResult) {
        self.mode = mode
        self.stop = stop
        self.runner = runner
    }

    deinit { stop() }

    @discardableResult
    func run(_ arguments: [String], stdin: String = "") throws -> ChildResult {
        try runner(arguments, stdin)
    }

    /// Runs coffer and expects `status` (saying which mode failed); returns the result.
    @discardableResult
    func expect(_ status: Int32, _ arguments: [String], stdin: String = "",
                sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildResult {
        let result = try run(arguments, stdin: stdin)
        #expect(result.status == status,
                "\(mode): coffer \(arguments.joined(separator: " ")): status \(result.status), stderr: \(result.stderr)",
                sourceLocation: sourceLocation)
        return result
    }
}
