import LoginUnlock

/// One call from libpam, as `LoginUnlock` sees it: the module's options, the user, and the
/// passwords libpam keeps, all through `PAMCall`.
struct PAMRequest: LoginRequest {
    private let pam: PAMCall
    let options: [String: String]
    let user: String

    /// Nil when libpam cannot name the user.
    init?(_ pam: PAMCall) {
        guard let user = pam.user else { return nil }
        self.pam = pam
        self.user = user
        var options: [String: String] = [:]
        for argument in pam.arguments {
            let parts = argument.split(separator: "=", maxSplits: 1)
            options[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        self.options = options
    }

    var account: (uid: UInt32, gid: UInt32, home: String)? { PAMCall.account(of: user) }

    func environment(_ name: String) -> String? { pam.environment(name) }

    var hasStashedPassword: Bool { pam.hasStashedPassword }

    func writeStashedPassword(to descriptor: Int32) -> Bool { pam.writeStashedPassword(to: descriptor) }

    func keepOldPassword(mayAsk: Bool) -> Bool { pam.keepOldPassword(mayAsk: mayAsk) }

    func writeOldAndNewPassword(to descriptor: Int32) -> Bool { pam.writeOldAndNewPassword(to: descriptor) }

    func log(_ message: String) { pam.warn("pam_coffer: " + message) }
}
