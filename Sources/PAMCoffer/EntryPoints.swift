import LoginUnlock

// What libpam's entry points (pam_sm_*, in CPAMCalls) hand over to, by these C names, once
// they have kept libpam's handle and the module's arguments for the call: the call becomes a
// `PAMRequest` and `LoginUnlock` does the work.

@_cdecl("coffer_pam_authenticate")
func pamAuthenticate() -> Int32 {
    PAMCall().stashPassword() ? 1 : 0
}

@_cdecl("coffer_pam_open_session")
func pamOpenSession() {
    guard let request = PAMRequest(PAMCall()) else { return }
    LoginUnlock.unlockAtLogin(request)
}

@_cdecl("coffer_pam_chauthtok")
func pamChangeAuthToken(_ phase: Int32) {
    guard let request = PAMRequest(PAMCall()) else { return }
    if phase == 1 {
        LoginUnlock.prepareForPasswordChange(request)
    } else {
        LoginUnlock.followPasswordChange(request)
    }
}
