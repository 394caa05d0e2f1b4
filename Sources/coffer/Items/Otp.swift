import ArgumentParser
import CofferCore
import CofferCrypto
import SystemKit

struct Otp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otp",
        abstract: "Show the current verification code of a stored one-time password, or store one.",
        discussion: """
        Keeps the secrets of two-factor verification codes (TOTP, RFC 6238: what an \
        authenticator app shows) as items of class 'otp', and prints their current code. \
        'coffer otp add' stores one from an otpauth:// URI (what a service's QR code holds) \
        or a base32 secret; 'coffer otp' prints the code of the one matching --service and \
        --account, with the seconds it stays valid.

        EXAMPLES
          echo 'otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub' | coffer otp add
          echo JBSWY3DPEHPK3PXP | coffer otp add --service example.org --account alice
          coffer otp --service GitHub
          coffer otp --service GitHub --json
        """,
        subcommands: [OtpShow.self, OtpAdd.self],
        defaultSubcommand: OtpShow.self
    )
}

struct OtpShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the current code of a stored one-time password.",
        discussion: """
        Prints "CODE (valid for N more seconds)", or with --json {"code", "secondsLeft", \
        "service", "account", "reference"}. Without --service and --account, the collection \
        must hold exactly one one-time password; when several match, they are listed \
        (exit status 2) so that you can choose.
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @OptionGroup var name: OtpName

    @Flag(help: "Print as JSON.")
    var json = false

    @Option(help: ArgumentHelp("The code at this time (seconds since 1970) instead of now.", visibility: .hidden))
    var at: UInt64?

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        var attributes = [ItemClass.schemaAttribute: ItemClass.oneTimePassword.schema]
        attributes["service"] = name.service
        attributes["account"] = name.account
        let found = try access.keychain.search(Query(attributes: attributes, collection: id))
        guard !found.isEmpty else {
            throw CLIError.notFound("no one-time password in '\(id)' matches; store one with: \(access.command("otp add"))")
        }
        try access.unlock(id, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        let matches = try access.keychain.search(Query(attributes: attributes, collection: id, returnAttributes: true))
        guard matches.count == 1, let match = matches.first, let metadata = match.metadata else {
            let names = matches.compactMap(\.metadata).map { "--service \(shellQuoted($0.attributes["service"] ?? "")) --account \(shellQuoted($0.attributes["account"] ?? ""))" }
            throw CLIError.usage("\(matches.count) one-time passwords match; choose one: \(names.joined(separator: "; "))")
        }
        var code: OneTimePassword.Code?
        try access.keychain.forEachSecret(of: [match.reference]) { _, secret in
            code = try OneTimePassword(item: metadata.attributes, secret: secret.bytes).code(at: at ?? Clock.now())
        }
        guard let code else { throw CLIError.notFound("the one-time password was deleted meanwhile") }
        if json {
            var out = Array("{\"code\": ".utf8)
            Encode.jsonString(code.digits, to: &out)
            out += Array(", \"secondsLeft\": \(code.secondsLeft), \"service\": ".utf8)
            Encode.jsonString(metadata.attributes["service"] ?? "", to: &out)
            out += Array(", \"account\": ".utf8)
            Encode.jsonString(metadata.attributes["account"] ?? "", to: &out)
            out += Array(", \"reference\": ".utf8)
            Encode.jsonString(match.reference.description, to: &out)
            out += Array("}\n".utf8)
            Output.write(out)
        } else {
            Output.line("\(code.digits) (valid for \(code.secondsLeft) more second\(code.secondsLeft == 1 ? "" : "s"))")
        }
    }
}

struct OtpAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Store a one-time password from an otpauth:// URI or a base32 secret.",
        discussion: """
        Reads one line from stdin (after the collection password with --password-stdin; at \
        a no-echo prompt on a terminal): an otpauth://totp/ URI, whose issuer, account, \
        algorithm, digits and period are used (--service and --account override them), or a \
        base32 secret, for which --service and --account are required and --algorithm, \
        --digits and --period default to SHA1, 6 and 30. The secret never appears on the \
        command line. Prints "added COLLECTION/ID" and the current code, so that you can \
        check it against the service.
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @OptionGroup var name: OtpName

    @Option(help: ArgumentHelp("For a base32 secret: SHA1, SHA256 or SHA512.", valueName: "algorithm"))
    var algorithm: String?

    @Option(help: ArgumentHelp("For a base32 secret: 6 to 8.", valueName: "digits"))
    var digits: Int?

    @Option(help: ArgumentHelp("For a base32 secret: seconds each code lasts.", valueName: "seconds"))
    var period: Int?

    @Flag(help: "Overwrite a stored one-time password for the same service and account.")
    var replace = false

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        try access.unlock(id, input: input)
        let text = try input.secret(raw: false)
        let (password, issuer, account) = try parse(text)
        guard let serviceName = self.name.service ?? issuer, !serviceName.isEmpty,
              let accountName = self.name.account ?? account, !accountName.isEmpty else {
            throw CLIError.usage("say which service and account this code is for, with --service and --account")
        }
        let item = NewItem(label: "\(serviceName) (\(accountName)) verification code",
                           attributes: password.attributes(service: serviceName, account: accountName),
                           secret: Secret(bytes: password.secret, contentType: "application/octet-stream"))
        let added: (reference: ItemReference, replaced: Bool)
        do {
            added = try access.keychain.add(item, to: id, replace: replace)
        } catch {
            guard (error as? CofferError) == .duplicateItem else { throw error }
            throw CLIError.duplicate("'\(id)' already holds a one-time password for \(serviceName) (\(accountName)); nothing was stored. Use --replace to overwrite it")
        }
        let code = try password.code(at: Clock.now())
        Output.line("\(added.replaced ? "replaced" : "added") \(added.reference); the code now is \(code.digits)")
    }

    /// The password in `text` (a URI or base32), with the issuer and account a URI names.
    private func parse(_ text: SecureBytes) throws -> (OneTimePassword, issuer: String?, account: String?) {
        if text.view.starts(with: Array("otpauth://".utf8)) {
            guard algorithm == nil, digits == nil, period == nil else {
                throw CLIError.usage("--algorithm, --digits and --period are for a base32 secret; an otpauth:// URI names its own")
            }
            let uri = try OTPAuthURI(text)
            return (uri.password, uri.issuer.isEmpty ? nil : uri.issuer, uri.account.isEmpty ? nil : uri.account)
        }
        let key = try SecureBytes(capacity: text.count)
        do {
            try Base32.decode(text.view) { try key.append($0) }
        } catch {
            throw CLIError.usage("what stdin holds is neither an otpauth:// URI nor a base32 secret (\(error)); nothing was stored")
        }
        let chosen = try algorithm.map { name throws -> OneTimePassword.Algorithm in
            guard let value = OneTimePassword.Algorithm(rawValue: name.uppercased()) else {
                throw CLIError.usage("--algorithm is SHA1, SHA256 or SHA512, not '\(name)'")
            }
            return value
        } ?? .sha1
        return (try OneTimePassword(secret: key, algorithm: chosen, digits: digits ?? 6, period: period ?? 30), nil, nil)
    }
}

/// Which one-time password: its service (issuer) and account.
struct OtpName: ParsableArguments {
    @Option(help: ArgumentHelp("The service (issuer) the code is for.", valueName: "service"))
    var service: String?

    @Option(help: ArgumentHelp("The account at that service.", valueName: "account"))
    var account: String?
}
