import CofferCrypto
import SystemKit

/// An `otpauth://totp/LABEL?secret=…&issuer=…&algorithm=…&digits=…&period=…` URI, the form
/// services show as a QR code and authenticator apps export. Read from secure memory: the
/// secret goes from the URI's bytes into secure memory without an ordinary copy; the label,
/// issuer and account are not secret.
public struct OTPAuthURI: Sendable {
    public let password: OneTimePassword
    /// The issuer (`issuer=`, else the part of the label before `:`), or "" when none is given.
    public let issuer: String
    /// The account (the label after `Issuer:`).
    public let account: String

    private static let prefix = Array("otpauth://".utf8)
    private static let percent = PercentEncoding(uppercase: true) { _ in true }

    public init(_ uri: SecureBytes) throws(CofferError) {
        do {
            self = try Self.parse(uri.view)
        } catch let error as CofferError {
            throw error
        } catch {
            throw .invalidArgument("this otpauth:// URI cannot be read: \(error)")
        }
    }

    private static func parse(_ bytes: SecureBytesView) throws -> OTPAuthURI {
        var text = bytes[...]
        while let last = text.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { text = text.dropLast() }
        guard text.starts(with: prefix) else {
            throw CofferError.invalidArgument("not an otpauth:// URI (it should start with otpauth://totp/)")
        }
        text = text.dropFirst(prefix.count)
        let slash = text.firstIndex(of: UInt8(ascii: "/")) ?? text.endIndex
        let type = String(decoding: text[..<slash], as: UTF8.self).lowercased()
        guard type == "totp" else {
            throw CofferError.invalidArgument("only time-based (otpauth://totp/) one-time passwords are supported, not '\(type)'")
        }
        let rest = text[slash...].dropFirst()
        let question = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let label = String(decoding: percent.decode(rest[..<question]), as: UTF8.self)

        var secret: SecureBytes?
        var parameters: [String: String] = [:]
        for pair in rest[question...].dropFirst().split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let name = String(decoding: pair[..<equals], as: UTF8.self).lowercased()
            let value = pair[equals...].dropFirst()
            if name == "secret" {
                let decoded = try SecureBytes(capacity: value.count)
                do {
                    try Base32.decode(value) { try decoded.append($0) }
                } catch let error as Base32.DecodingError {
                    throw CofferError.invalidArgument("the secret of this otpauth:// URI is not base32: \(error)")
                }
                secret = decoded
            } else {
                parameters[name] = String(decoding: percent.decode(value), as: UTF8.self)
            }
        }
        guard let secret, !secret.isEmpty else { throw CofferError.invalidArgument("this otpauth:// URI has no secret= parameter") }

        let algorithm = try parameters["algorithm"].map { name throws -> OneTimePassword.Algorithm in
            guard let known = OneTimePassword.Algorithm(rawValue: name.uppercased()) else {
                throw CofferError.invalidArgument("unknown algorithm '\(name)' (SHA1, SHA256 or SHA512)")
            }
            return known
        } ?? .sha1
        let digits = try number(parameters["digits"], named: "digits") ?? 6
        let period = try number(parameters["period"], named: "period") ?? 30
        let colon = label.firstIndex(of: ":")
        let labelIssuer = colon.map { String(label[..<$0]) } ?? ""
        let account = colon.map { String(label[label.index(after: $0)...]) } ?? label
        return OTPAuthURI(password: try OneTimePassword(secret: secret, algorithm: algorithm, digits: digits, period: period),
                          issuer: parameters["issuer"] ?? labelIssuer,
                          account: account.trimmingLeadingSpaces())
    }

    private init(password: OneTimePassword, issuer: String, account: String) {
        self.password = password
        self.issuer = issuer
        self.account = account
    }

    private static func number(_ text: String?, named name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else { throw CofferError.invalidArgument("\(name)=\(text) is not a number") }
        return value
    }
}

private extension String {
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " }) }
}
