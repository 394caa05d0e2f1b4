import CofferCore
import CofferStore
import Foundation

/// `StoreTortureWriter --audit DIRECTORY PREFIX COUNT LIMIT UMASK GO_FILE [FULL_AT]`: records
/// COUNT audit events (item n, label "PREFIX n" padded with text that needs escaping) in
/// DIRECTORY's audit log, rotated at LIMIT bytes, with umask UMASK (octal). Prints "ready",
/// waits (at most 60 s) until GO_FILE exists ("-": at once), so that several writers start
/// together, then records as fast as it can and prints "done". Warnings go to stderr.
///
/// With FULL_AT, files cannot grow past FULL_AT bytes (RLIMIT_FSIZE, as on a full disk) while
/// the first COUNT events are recorded; then the limit is lifted ("space was freed") and COUNT
/// more are recorded.
enum AuditWriter {
    static func run(_ arguments: [String]) -> Int32 {
        guard (6...7).contains(arguments.count), let count = Int(arguments[2]), let limit = Int(arguments[3]),
              let mask = mode_t(arguments[4], radix: 8) else {
            FileHandle.standardError.write(Data("usage: StoreTortureWriter --audit DIRECTORY PREFIX COUNT LIMIT UMASK GO_FILE [FULL_AT]\n".utf8))
            return 2
        }
        let (directory, prefix, go) = (arguments[0], arguments[1], arguments[5])
        umask(mask)
        let log = AuditLogFile(directory: directory, limit: limit) { message in
            FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let deadline = Date().addingTimeInterval(60)
        while go != "-" && !FileManager.default.fileExists(atPath: go) && Date() < deadline { usleep(500) }
        let application = Application(kind: .executable, name: "/usr/bin/\(prefix)")
        let padding = String(repeating: "\"quoted\" \\ back\tslash ✓ ", count: 4)
        func record(_ numbers: Range<Int>) {
            for n in numbers {
                log.record(AuditEvent(action: .read, outcome: n % 3 == 0 ? .failed : .ok, application: application,
                                      collection: CollectionID("login"), item: UInt64(n), label: "\(prefix) \(n) \(padding)",
                                      detail: "writer \(prefix)"))
            }
        }
        if arguments.count == 7, let fullAt = rlim_t(arguments[6]) {
            signal(SIGXFSZ, SIG_IGN)   // a write past the limit then fails with EFBIG instead of killing us
            var fileSize = rlimit(rlim_cur: fullAt, rlim_max: rlim_t.max)
            setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &fileSize)
            record(0..<count)
            fileSize.rlim_cur = rlim_t.max
            setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &fileSize)
            record(count..<2 * count)
        } else {
            record(0..<count)
        }
        FileHandle.standardOutput.write(Data("done\n".utf8))
        return 0
    }
}
