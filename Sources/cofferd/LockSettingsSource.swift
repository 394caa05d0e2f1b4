import CofferCore
import CofferStore
import Synchronization

/// The lock settings as the settings file says now, for the server. A file that cannot be
/// read gives the standard settings (locking sooner is the safe side); each new problem with
/// it is logged once.
final class LockSettingsSource: Sendable {
    let file: LockConfigurationFile
    let log: @Sendable (String) -> Void
    private let reported = Mutex<[String]>([])

    init(file: LockConfigurationFile, log: @escaping @Sendable (String) -> Void) {
        self.file = file
        self.log = log
    }

    func current() -> LockConfiguration {
        let configuration: LockConfiguration
        var problems: [String]
        do {
            configuration = try file.read()
            problems = configuration.problems.map { "\(file.path), \($0)" }
        } catch {
            configuration = LockConfiguration()
            problems = ["\(error); the standard lock settings apply"]
        }
        let new = reported.withLock { seen -> [String] in
            defer { seen = problems }
            return problems.filter { !seen.contains($0) }
        }
        for problem in new { log("warning: lock settings: \(problem)") }
        return configuration
    }
}
