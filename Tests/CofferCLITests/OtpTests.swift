import CofferTestSupport
import Foundation
import Testing

/// `coffer otp add` and `coffer otp` through the built binary, against RFC 6238's test vectors
/// (appendix B) with the clock given by the hidden `--at`.
@Suite(.timeLimit(.minutes(5))) struct OtpTests {
    /// RFC 6238's keys, base32: "12345678901234567890" repeated to 20, 32 and 64 bytes.
    static let keys = [
        "SHA1": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",
        "SHA256": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA====",
        "SHA512": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNA=",
    ]
    /// Time, then the 8-digit codes for SHA1, SHA256, SHA512.
    static let vectors: [(UInt64, [String: String])] = [
        (59, ["SHA1": "94287082", "SHA256": "46119246", "SHA512": "90693936"]),
        (1_111_111_109, ["SHA1": "07081804", "SHA256": "68084774", "SHA512": "25091201"]),
        (1_234_567_890, ["SHA1": "89005924", "SHA256": "91819424", "SHA512": "93441116"]),
        (20_000_000_000, ["SHA1": "65353130", "SHA256": "77737706", "SHA512": "47863826"]),
    ]

    @Test func theRFCVectorsFromBase32AndFromAnOtpauthURI() throws {
        let f = try CLIFixture()
        try f.createCollection()
        for (algorithm, key) in Self.keys {
            // The base32 form for SHA1 and SHA512, the otpauth:// form for SHA256.
            let added: ChildResult
            if algorithm == "SHA256" {
                let uri = "otpauth://totp/RFC:\(algorithm)?secret=\(key)&issuer=RFC&algorithm=SHA256&digits=8&period=30"
                added = try f.run(["otp", "add", "--password-stdin"], stdin: f.withPassword(uri))
            } else {
                added = try f.run(["otp", "add", "--service", "RFC", "--account", algorithm, "--algorithm", algorithm,
                                         "--digits", "8", "--password-stdin"], stdin: f.withPassword(key))
            }
            #expect(added.status == 0 && added.stdout.hasPrefix("added login/"), "\(added.stderr)")
            #expect(!added.stdout.contains(key) && !added.stderr.contains(key))
        }
        for (time, codes) in Self.vectors {
            for (algorithm, code) in codes {
                let shown = try f.run(["otp", "--service", "RFC", "--account", algorithm, "--at", String(time), "--json",
                                       "--password-stdin"], stdin: f.withPassword())
                #expect(shown.status == 0, "\(shown.stderr)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdoutBytes)) as? [String: Any])
                #expect(json["code"] as? String == code, "\(algorithm) at \(time): \(shown.stdout)")
                #expect(json["secondsLeft"] as? Int == 30 - Int(time % 30))
                #expect(json["service"] as? String == "RFC" && json["account"] as? String == algorithm)
            }
        }
        // Plain text, and the class and parameters kept as attributes (the key is the secret).
        let text = try f.run(["otp", "--service", "RFC", "--account", "SHA1", "--at", "59", "--password-stdin"], stdin: f.withPassword())
        #expect(text.stdout == "94287082 (valid for 1 more second)\n", "\(text.stderr)")
        let listed = try f.run(["search", "--attr", "account=SHA256", "--json", "--password-stdin"], stdin: f.withPassword())
        #expect(listed.stdout.contains("\"otp:algorithm\": \"SHA256\"") && listed.stdout.contains("\"xdg:schema\": \"org.coffer.OneTimePassword\""),
                "\(listed.stdout)")
    }

    @Test func whichCodeWhenSeveralOrNoneMatchAndBadInput() throws {
        let f = try CLIFixture()
        try f.createCollection()
        let none = try f.run(["otp", "--password-stdin"], stdin: f.withPassword())
        #expect(none.status == 1 && none.stderr.contains("otp add"), "\(none.stderr)")
        for account in ["alice", "bob"] {
            let added = try f.run(["otp", "add", "--service", "example.org", "--account", account, "--password-stdin"],
                                  stdin: f.withPassword(Self.keys["SHA1"]!))
            #expect(added.status == 0, "\(added.stderr)")
        }
        let several = try f.run(["otp", "--service", "example.org", "--password-stdin"], stdin: f.withPassword())
        #expect(several.status == 2 && several.stderr.contains("--account alice") && several.stderr.contains("--account bob"),
                "\(several.stderr)")
        #expect(try f.run(["otp", "--account", "bob", "--password-stdin"], stdin: f.withPassword()).status == 0)
        let twice = try f.run(["otp", "add", "--service", "example.org", "--account", "bob", "--password-stdin"],
                              stdin: f.withPassword(Self.keys["SHA1"]!))
        #expect(twice.status == 4 && twice.stderr.contains("--replace"), "\(twice.stderr)")
        let garbage = try f.run(["otp", "add", "--service", "x", "--account", "y", "--password-stdin"], stdin: f.withPassword("not base32!"))
        #expect(garbage.status == 2 && garbage.stderr.contains("neither an otpauth:// URI nor a base32 secret"), "\(garbage.stderr)")
        let unnamed = try f.run(["otp", "add", "--password-stdin"], stdin: f.withPassword(Self.keys["SHA1"]!))
        #expect(unnamed.status == 2 && unnamed.stderr.contains("--service and --account"), "\(unnamed.stderr)")
    }
}

