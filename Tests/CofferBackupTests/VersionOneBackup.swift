import Foundation

/// A version 1 backup as `coffer` 0.3.0 wrote it (BackupFile.write at commit f7c5517, Argon2id
/// `.testing`), kept so that every later reader is checked against a real old file.
///
/// Passphrase "version one". One collection, `login` ("Login", created 1600000000, modified
/// 1600000100), with two items in this order:
/// - "Git": service=git, account=ann, secret "git secret" (text/plain), times 1600000010/1600000020
/// - "Mail": service=mail, secret "mail secret" (text/plain), times 1600000030/1600000040
///
/// and the alias `default` naming `login`.
enum VersionOneBackup {
    static let passphrase = "version one"

    static var bytes: [UInt8] {
        [UInt8](Data(base64Encoded: base64)!)
    }

    private static let base64 =
        "Q29mZmVyQmFja3VwCgANCgEAAAABAAAAQAAAAAEAAACZkzz/gdAl7lIV//JP23GYUQLnyNuYQt6R3DjMQXJgqd7RiNjhZs0p" +
        "x6yabYAR0GRETU97w+QbCuj2zEUsU2Ff3YVHlZheigHZQ+iL5XH/mdQvrxYHqryLixUr6DOGdgl9SrLMEqA4A+UvBVYOrHrk" +
        "TgWgFMIGYm8Wlcs455dX/LroncnSYTjd5oAJT/cTyh2nSG54/EpXmmvva4+1ZY+nu4phD66eAeiEzovHkrhUmJcag88WmMGF" +
        "SnjR1C7JQEo0bBSS0nnn+j+T/360TpXVLZC6TZS5kaBZELjg5AP/UmBtVQaYnDWoQnrXQm7i3/XHij3mfijKm5Gu9g0DejtI" +
        "eu+ehG+SIrBQ5Wv5sSe+CT4qyQMY"
}
