import CofferTestSupport
import Foundation
import Testing

/// The store directory tells no more than the collection files: after a session of writes,
/// replacements, deletes and refusals through the real cofferd, no item label or attribute
/// value is in any of its files in clear, and a collection's label only in its own file (which
/// shows it while locked, as the Secret Service's Label property does); the audit log holds
/// the labels sealed, cofferd's log none; `coffer log --unseal` with the password shows them.
@Suite(.timeLimit(.minutes(5))) struct AuditSealingTests {
    static let words = ["Zebra label 7731", "zebra-service-5512", "zebra-account-9901", "Okapi label 4410", "okapi-host-3320",
                        "Wombat collection 8812"]

    @Test func noLabelOrAttributeValueIsInClearInTheStoreDirectory() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let zebra = ["service": "zebra-service-5512", "account": "zebra-account-9901"]
        try f.store(label: "Zebra label 7731", zebra, secret: Array("first".utf8))
        try f.store(label: "Zebra label 7731", zebra, secret: Array("second".utf8))
        try f.store(label: "Okapi label 4410", ["host": "okapi-host-3320"], secret: Array("third".utf8))
        #expect(try f.secretTool(["clear", "host", "okapi-host-3320"]).exitCode == 0)
        try f.coffer(["policy", "strict"])
        #expect(try PythonReader(f).read(zebra) == "org.freedesktop.DBus.Error.AccessDenied")
        try f.coffer(["create-collection", "work", "--label", "Wombat collection 8812"])
        #expect(f.stopDaemon()?.exitCode == 0)

        let files = try #require(FileManager.default.subpathsOfDirectory(atPath: f.dataDir) as [String]?)
        #expect(files.contains("audit.log") && files.contains("login.auditkey"), "\(files)")
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: f.dataDir + "/" + file) else { continue }
            for word in Self.words where !(word == "Wombat collection 8812" && file == "work.coffer") {
                #expect(bytes.range(of: Data(word.utf8)) == nil, "'\(word)' is in \(file) in clear")
            }
        }
        for word in Self.words {
            #expect(!f.daemonLog.contains(word), "'\(word)' is in cofferd's log")
        }

        // The labels are there, sealed: the login password opens them.
        let labels = Set(try f.auditLog(unsealing: true).compactMap { $0["collection"] as? String == "login" ? $0["label"] as? String : nil })
        #expect(labels.isSuperset(of: ["Zebra label 7731", "Okapi label 4410"]), "\(labels)")
    }
}
