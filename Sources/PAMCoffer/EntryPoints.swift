internal import CPAM
import LoginUnlock

// The PAM entry points (`pam_sm_*`, found by name when libpam loads pam_coffer.so). They wrap
// what libpam passes in a `PAMHandle` at once (the only place its pointers are held), turn that
// into a `PAMRequest` and hand over to `LoginUnlock`.

@_cdecl("pam_sm_authenticate")
public func pamAuthenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                            _ argv: OpaquePointer?) -> Int32 {
    guard let pam = PAMHandle(pamh, argc, argv) else { return PAM_SYSTEM_ERR }
    // Only keeps the password: authenticating is the other modules' job.
    return pam.stashPassword() ? PAM_SUCCESS : PAM_IGNORE
}

@_cdecl("pam_sm_setcred")
public func pamSetCredentials(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                              _ argv: OpaquePointer?) -> Int32 {
    PAM_SUCCESS
}

@_cdecl("pam_sm_open_session")
public func pamOpenSession(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: OpaquePointer?) -> Int32 {
    guard let request = PAMHandle(pamh, argc, argv).flatMap(PAMRequest.init) else { return PAM_IGNORE }
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
    guard let request = PAMHandle(pamh, argc, argv).flatMap(PAMRequest.init) else { return PAM_IGNORE }
    if flags & Int32(PAM_PRELIM_CHECK) != 0 {
        LoginUnlock.prepareForPasswordChange(request)
    } else if flags & Int32(PAM_UPDATE_AUTHTOK) != 0 {
        LoginUnlock.followPasswordChange(request)
    }
    return PAM_SUCCESS
}
