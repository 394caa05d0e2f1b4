import CPAMCalls

/// The call libpam is making now, as CPAMCalls keeps it for the length of the call: the
/// module's arguments, the user, the PAM environment and the passwords libpam holds, read
/// through copies. It holds no pointer, and the password itself never enters Swift.
struct PAMCall {
    /// The module's arguments as the PAM configuration gives them (`name` or `name=value`);
    /// one that does not fit the copy buffer is left out.
    var arguments: [String] {
        (0..<cpam_argument_count()).compactMap { index in Self.copied { cpam_argument(index, &$0, $0.count) } }
    }

    /// The name of the user being logged in.
    var user: String? { Self.copied { cpam_user(&$0, $0.count) } }

    /// `user`'s uid, gid and home directory, from the password database.
    static func account(of user: String) -> (uid: UInt32, gid: UInt32, home: String)? {
        var uid: uid_t = 0, gid: gid_t = 0
        guard let home = copied({ cpam_account(user, &uid, &gid, &$0, $0.count) }) else { return nil }
        return (uid, gid, home)
    }

    /// A variable of the PAM environment (what the session will get), else of this process.
    func environment(_ name: String) -> String? {
        Self.copied { cpam_environment(name, &$0, $0.count) }
    }

    /// Keeps the password the user typed for the session to come: whether that worked.
    func stashPassword() -> Bool { cpam_stash_authtok() == 0 }

    /// Whether a password was kept at authentication (none after an autologin, a fingerprint
    /// or a smart card).
    var hasStashedPassword: Bool { cpam_has_stashed() == 1 }

    /// Writes the password kept at authentication, then a newline, to `descriptor`.
    func writeStashedPassword(to descriptor: Int32) -> Bool { cpam_write_stashed(descriptor) == 0 }

    /// Keeps the current password for the change to come (asking for it only if `mayAsk`).
    func keepOldPassword(mayAsk: Bool) -> Bool { cpam_stash_old_authtok(mayAsk ? 1 : 0) == 0 }

    /// Writes the old password, then the new one, each with a newline, to `descriptor`.
    func writeOldAndNewPassword(to descriptor: Int32) -> Bool { cpam_write_old_and_new(descriptor) == 0 }

    /// Logs `message` through libpam (to syslog).
    func warn(_ message: String) { cpam_warn(message) }

    /// The string a shim call copies into the buffer it is given (its length, or -1: nil).
    private static func copied(_ copy: (inout [CChar]) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = Int(copy(&buffer))
        guard length >= 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
