internal import CPAM
import LoginUnlock

// The PAM entry points (`pam_sm_*`, found by name when libpam loads pam_coffer.so): libpam's
// wrapper. They turn libpam's arguments into a `PAMRequest` and hand over to `LoginUnlock`.
// libpam's handle and the module's arguments stay opaque here: CPAM's shim reads them and
// copies the strings out into Swift arrays; the password itself never enters Swift.

@_cdecl("pam_sm_authenticate")
public func pamAuthenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                            _ argv: OpaquePointer?) -> Int32 {
    guard let pamh else { return PAM_SYSTEM_ERR }
    // Only keeps the password: authenticating is the other modules' job.
    return cpam_stash_authtok(pamh) == PAM_SUCCESS ? PAM_SUCCESS : PAM_IGNORE
}

@_cdecl("pam_sm_setcred")
public func pamSetCredentials(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                              _ argv: OpaquePointer?) -> Int32 {
    PAM_SUCCESS
}

@_cdecl("pam_sm_open_session")
public func pamOpenSession(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: OpaquePointer?) -> Int32 {
    guard let request = PAMRequest(pamh, argc, argv) else { return PAM_IGNORE }
    LoginUnlock.unlockAtLogin(request)
    return PAM_SUCCESS   // never keep a login out: a failure is logged
}

@_cdecl("pam_sm_close_session")
public func pamCloseSession(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                            _ argv: OpaquePointer?) -> Int32 {
    PAM_SUCCESS
}

@_cdecl("pam_sm_chauthtok")
public func pamChangeAuthToken(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                               _ argv: OpaquePointer?) -> Int32 {
    // libpam calls twice: first to check (PAM_PRELIM_CHECK), then to change. Never in the way of
    // the change itself: a failure is logged.
    guard let request = PAMRequest(pamh, argc, argv) else { return PAM_IGNORE }
    if flags & Int32(PAM_PRELIM_CHECK) != 0 {
        LoginUnlock.prepareForPasswordChange(request)
    } else if flags & Int32(PAM_UPDATE_AUTHTOK) != 0 {
        LoginUnlock.followPasswordChange(request)
    }
    return PAM_SUCCESS
}

/// One call from libpam: its handle, the module's options, the user.
struct PAMRequest: LoginRequest {
    private let handle: OpaquePointer
    let options: [String: String]
    let user: String

    init?(_ pamh: OpaquePointer?, _ argc: Int32, _ argv: OpaquePointer?) {
        guard let pamh, let name = Self.copied({ cpam_user(pamh, &$0, $0.count) }) else { return nil }
        handle = pamh
        user = name
        var options: [String: String] = [:]
        for index in 0..<max(argc, 0) {
            guard let text = Self.copied({ cpam_argument(argv, argc, index, &$0, $0.count) }) else { continue }
            let parts = text.split(separator: "=", maxSplits: 1)
            options[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        self.options = options
    }

    /// The string a shim call copies into the buffer it is given (its length, or -1: nil).
    private static func copied(_ copy: (inout [CChar]) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = Int(copy(&buffer))
        guard length >= 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The user's uid, gid and home directory.
    var account: (uid: UInt32, gid: UInt32, home: String)? {
        var uid: uid_t = 0, gid: gid_t = 0
        guard let home = Self.copied({ cpam_account(user, &uid, &gid, &$0, $0.count) }) else { return nil }
        return (uid, gid, home)
    }

    /// A variable of the PAM environment (what the session will get), else of this process.
    func environment(_ name: String) -> String? {
        Self.copied { cpam_environment(handle, name, &$0, $0.count) }
    }

    /// Writes the password kept at authentication, then a newline, to `descriptor`.
    func writeStashedPassword(to descriptor: Int32) -> Bool { cpam_write_stashed(handle, descriptor) == 0 }

    /// Keeps the current password for the change to come (asking for it only if `mayAsk`).
    func keepOldPassword(mayAsk: Bool) -> Bool { cpam_stash_old_authtok(handle, mayAsk ? 1 : 0) == 0 }

    /// Writes the old password, then the new one, each with a newline, to `descriptor`.
    func writeOldAndNewPassword(to descriptor: Int32) -> Bool { cpam_write_old_and_new(handle, descriptor) == 0 }

    func log(_ message: String) { cpam_warn(handle, "pam_coffer: " + message) }
}
