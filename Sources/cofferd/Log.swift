import Foundation

/// One line per event on standard error (the journal under systemd). Never given a secret.
enum Log {
    static let line: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("cofferd: \(message)\n".utf8))
    }
}
