#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the `errno` it set and the operation that failed.
///
/// Two values are equal when their codes are, whatever the operation, so that callers can
/// match a code: `catch Errno.wouldBlock`, `if error == .fileExists`.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public let code: Int32
    /// What failed: the call, and what it was called on where that helps (`open /some/path`).
    public let operation: String

    public init(_ code: Int32, operation: String = "") {
        self.code = code
        self.operation = operation
    }

    /// The system's text for the code (`No such file or directory`).
    public var reason: String { String(cString: strerror(code)) }

    /// `<operation> failed: <reason>`.
    public var description: String { "\(operation) failed: \(reason)" }

    public static func == (a: Errno, b: Errno) -> Bool { a.code == b.code }

    /// Whether `error` is an `Errno` with this code: `catch Errno.wouldBlock` where any error
    /// may arrive.
    public static func ~= (pattern: Errno, error: any Error) -> Bool { (error as? Errno) == pattern }

    /// EAGAIN: a non-blocking descriptor is not ready.
    public static let wouldBlock = Errno(EAGAIN)
    /// EPIPE: the reading end of a pipe is closed.
    public static let brokenPipe = Errno(EPIPE)
    /// ETIMEDOUT: a wait ran out of time.
    public static let timedOut = Errno(ETIMEDOUT)
    /// ENOENT.
    public static let noSuchFile = Errno(ENOENT)
    /// EEXIST.
    public static let fileExists = Errno(EEXIST)
    /// ENOSPC.
    public static let noSpace = Errno(ENOSPC)
    /// EDQUOT.
    public static let quotaExceeded = Errno(EDQUOT)
    /// EFBIG: a write would make the file larger than the file size limit (RLIMIT_FSIZE) or
    /// than the file system allows.
    public static let fileTooLarge = Errno(EFBIG)
    /// EACCES.
    public static let permissionDenied = Errno(EACCES)
    /// EPERM.
    public static let notPermitted = Errno(EPERM)
    /// EROFS.
    public static let readOnlyFileSystem = Errno(EROFS)
    /// ELOOP: what opening a symbolic link with `OpenOptions.noFollow` fails with.
    public static let symbolicLink = Errno(ELOOP)
}

/// Calls `body` (a system call returning -1 on failure) again for as long as it fails with
/// EINTR: the one place an interrupted call is retried. Throws `Errno` for any other failure.
@inline(__always)
func retryingInterrupted<Result: BinaryInteger>(_ operation: @autoclosure () -> String,
                                                _ body: () -> Result) throws(Errno) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code != EINTR { throw Errno(code, operation: operation()) }
    }
}
