import CofferCore

/// Wrong passwords given for one collection, kept beside it (`<id>.attempts`, 0600) so that
/// every process — cofferd's prompts and interfaces, `coffer`, the PAM module — and every
/// restart sees them. After `n` wrong passwords in a row, the next password is not even checked
/// until `wait(afterFailures: n)` seconds after the last: 1, 2, 4, … up to 5 minutes. The right
/// password, given when it may be, clears the count.
///
/// An attempt (`attempt(at:_:)`) checks the wait, checks the password and records the outcome
/// under one exclusive lock of the file: attempts at the same collection, from any thread or
/// process, are checked one at a time, so parallel guesses get no more checks than the
/// schedule allows.
///
/// ```
/// u32 wrong passwords in a row, u64 time of the last (milliseconds since 1970)
/// ```
struct UnlockThrottle {
    let path: String
    let collection: CollectionID

    static let maxWait: UInt64 = 300
    static let fileExtension = ".attempts"

    init(directory: String, collection: CollectionID) {
        path = "\(directory)/\(collection.rawValue)\(Self.fileExtension)"
        self.collection = collection
    }

    /// How long the next attempt waits after `failures` wrong passwords in a row.
    static func wait(afterFailures failures: UInt32) -> UInt64 {
        guard failures > 0 else { return 0 }
        return min(UInt64(1) << UInt64(min(failures - 1, 16)), maxWait)
    }

    /// Runs `check` (a password check: true when right) unless the wait after earlier wrong
    /// passwords is not over at `now()` (then throws `throttled`), and records its outcome; all
    /// of it under the file's exclusive lock, which waits for any attempt under way.
    func attempt<R>(at now: () -> UInt64, _ check: () throws(CofferError) -> R?) throws(CofferError) -> R {
        let file = try PosixFile(path: path, create: true)
        try file.lock(.exclusive)
        defer { file.unlock() }
        var (failures, last) = Self.decode(try file.read(at: 0, count: 12))
        let left = Self.secondsLeft(failures: failures, last: last, now: now())
        if left > 0 { throw .throttled(collection.rawValue, seconds: left) }
        if let right = try check() {
            if failures > 0 {
                try file.truncate(to: 0)
                try file.sync()
            }
            return right
        }
        // Durably: a crash must not forget a guess.
        failures = failures == .max ? failures : failures + 1
        last = now()
        var w = ByteWriter(capacity: 12)
        w.u32(failures)
        w.u64(last)
        try file.write(w.bytes, at: 0)
        try file.truncate(to: 12)
        try file.sync()
        throw .authenticationFailed
    }

    /// How many seconds (rounded up) after `now` the next password is checked (0: at once).
    func secondsLeft(at now: UInt64) -> UInt64 {
        guard let (failures, last) = try? read() else { return 0 }
        return Self.secondsLeft(failures: failures, last: last, now: now)
    }

    /// Never more than `maxWait`, even for a last failure in the future (a clock set back).
    private static func secondsLeft(failures: UInt32, last: UInt64, now: UInt64) -> UInt64 {
        let (sum, overflow) = last.addingReportingOverflow(wait(afterFailures: failures) * 1000)
        let until = overflow ? UInt64.max : sum
        guard failures > 0, now < until else { return 0 }
        let (seconds, rest) = (until - now).quotientAndRemainder(dividingBy: 1000)
        return min(seconds + (rest > 0 ? 1 : 0), maxWait)
    }

    /// Clears the count after the right password.
    func reset() {
        guard (try? PosixFile.identity(of: path)) ?? nil != nil else { return }
        try? PosixFile.remove(path)
    }

    private func read() throws(CofferError) -> (UInt32, UInt64) {
        guard try PosixFile.identity(of: path) != nil else { return (0, 0) }
        let file = try PosixFile(path: path, writable: false)
        return Self.decode(try file.read(at: 0, count: 12))
    }

    /// A short or empty file counts as no wrong password. A time below 10¹¹ is in seconds, as
    /// Coffer 0.3.0 wrote it (in milliseconds that would be March 1973).
    private static func decode(_ bytes: [UInt8]) -> (UInt32, UInt64) {
        var r = ByteReader(bytes)
        guard let failures = try? r.u32(), let last = try? r.u64() else { return (0, 0) }
        return (failures, last < 100_000_000_000 ? last * 1000 : last)
    }
}
