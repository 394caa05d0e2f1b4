import SystemKit

/// `systemctl --user`, asked with a deadline so that a hung user manager cannot hang
/// `coffer doctor`.
struct UserSystemd {
    let session: SessionPaths
    static let timeout: Duration = .seconds(5)

    /// What systemctl said: its first line of output and its exit status.
    struct Answer {
        let text: String
        let exitStatus: Int32
    }

    enum Failure: Error {
        /// systemctl is not installed: no systemd user units run here.
        case noSystemd
        /// It could not be run or did not answer in time (the text says which).
        case unanswered(String)
    }

    /// `systemctl --user <verb> <unit>` (verbs that print one word: is-enabled, is-active).
    func ask(_ verb: String, _ unit: String) -> Result<Answer, Failure> {
        guard let systemctl = FileSystem.executable(named: "systemctl",
                                                    searchPath: session.environment["PATH"] ?? "/usr/bin:/bin") else {
            return .failure(.noSystemd)
        }
        do {
            let output = try Subprocess.output(of: systemctl, arguments: ["--user", verb, unit],
                                               environment: session.environment, timeout: Self.timeout)
            guard case .exited(let status) = output.termination else {
                return .failure(.unanswered("systemctl --user \(verb) \(unit) did not answer within \(Self.timeout.components.seconds) s"))
            }
            let text = String(decoding: output.standardOutput, as: UTF8.self)
                .split(whereSeparator: \.isNewline).first.map { String($0).trimmingWhitespace() } ?? ""
            return .success(Answer(text: text, exitStatus: status))
        } catch {
            return .failure(.unanswered("cannot run systemctl: \(error)"))
        }
    }

    /// Whether an `is-enabled` answer means the unit starts by itself (at login, or when its
    /// socket is used).
    static func startsByItself(_ state: String) -> Bool {
        ["enabled", "enabled-runtime", "static", "alias", "linked", "linked-runtime", "generated", "transient"].contains(state)
    }
}
