import SystemKit

/// One line per event on standard error (the journal under systemd). Never given a secret.
///
/// Written with write(2), errors ignored: a detached daemon outlives whatever its stderr was
/// (a closed pipe, a hung-up terminal), and FileHandle.write traps on EPIPE or EIO.
enum Log {
    static let line: @Sendable (String) -> Void = { message in
        try? FileDescriptor.standardError.writeAll(Array("cofferd: \(message)\n".utf8))
    }
}
