#if canImport(Glibc)
import Glibc
#endif

/// One line per event on standard error (the journal under systemd). Never given a secret.
///
/// Written with write(2), errors ignored: a detached daemon outlives whatever its stderr was
/// (a closed pipe, a hung-up terminal), and FileHandle.write traps on EPIPE or EIO.
enum Log {
    static let line: @Sendable (String) -> Void = { message in
        let bytes = Array("cofferd: \(message)\n".utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
