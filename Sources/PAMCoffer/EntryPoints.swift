internal import CPAM
import LoginUnlock

// The PAM entry points (`pam_sm_*`, found by name when libpam loads pam_coffer.so): libpam's
// wrapper, the only place pam_coffer sees a C pointer. They turn libpam's arguments into a
// `PAMRequest` and hand over to `LoginUnlock`; the password itself never enters Swift (see
// CPAM's shim).

@_cdecl("pam_sm_authenticate")
public func pamAuthenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                            _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_SYSTEM_ERR }
    // Only keeps the password: authenticating is the other modules' job.
    return cpam_stash_authtok(pamh) == PAM_SUCCESS ? PAM_SUCCESS : PAM_IGNORE
}

@_cdecl("pam_sm_setcred")
public func pamSetCredentials(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                              _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_SUCCESS
}

@_cdecl("pam_sm_open_session")
public func pamOpenSession(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let request = PAMRequest(pamh, argc, argv) else { return PAM_IGNORE }
    LoginUnlock.unlockAtLogin(request)
    return PAM_SUCCESS   // never keep a login out: a failure is logged
}

@_cdecl("pam_sm_close_session")
public func pamCloseSession(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                            _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_SUCCESS
}

@_cdecl("pam_sm_chauthtok")
public func pamChangeAuthToken(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                               _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
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

    init?(_ pamh: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard let pamh, let name = cpam_user(pamh) else { return nil }
        handle = pamh
        user = String(cString: name)
        var options: [String: String] = [:]
        for index in 0..<Int(max(argc, 0)) {
            guard let argument = argv?[index] else { continue }
            let text = String(cString: argument)
            let parts = text.split(separator: "=", maxSplits: 1)
            options[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        self.options = options
    }

    /// The user's uid, gid and home directory.
    var account: (uid: UInt32, gid: UInt32, home: String)? {
        var uid: uid_t = 0, gid: gid_t = 0
        var home = [CChar](repeating: 0, count: 4096)
        guard cpam_account(user, &uid, &gid, &home, home.count) == 0 else { return nil }
        return (uid, gid, String(decoding: home.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// A variable of the PAM environment (what the session will get), else of this process.
    func environment(_ name: String) -> String? {
        if let value = pam_getenv(handle, name) { return String(cString: value) }
        if let value = getenv(name) { return String(cString: value) }
        return nil
    }

    /// Writes the password kept at authentication, then a newline, to `descriptor`.
    func writeStashedPassword(to descriptor: Int32) -> Bool { cpam_write_stashed(handle, descriptor) == 0 }

    /// Keeps the current password for the change to come (asking for it only if `mayAsk`).
    func keepOldPassword(mayAsk: Bool) -> Bool { cpam_stash_old_authtok(handle, mayAsk ? 1 : 0) == 0 }

    /// Writes the old password, then the new one, each with a newline, to `descriptor`.
    func writeOldAndNewPassword(to descriptor: Int32) -> Bool { cpam_write_old_and_new(handle, descriptor) == 0 }

    func log(_ message: String) { cpam_warn(handle, "pam_coffer: " + message) }
}
