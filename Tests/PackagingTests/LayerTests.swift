import Foundation
import Testing

/// The layers Package.swift describes, held in the sources: SwiftPM lets a file import any
/// module built beside it, declared or not, so the imports themselves are checked.
struct LayerTests {
    /// What each module's files may import, beyond the system's (Glibc, Dispatch,
    /// Synchronization, FoundationEssentials).
    static let allowed: [String: Set<String>] = [
        "SecretServiceProtocol": ["DBusKit", "CofferCrypto"],
        "SecretServiceClient": ["DBusKit", "CofferCrypto", "SecretServiceProtocol"],
        "SystemKit": ["CProcess"],
        "LoginUnlock": ["SystemKit"],
    ]
    static let system: Set<String> = ["Glibc", "Dispatch", "Synchronization", "FoundationEssentials"]

    @Test(arguments: allowed.keys.sorted())
    func aModuleImportsOnlyTheLayersBelowIt(module: String) throws {
        let directory = Repository.root + "/Sources/" + module
        let files = try #require(FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String })
            .filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") || $0.hasPrefix("@testable import ") }
                .compactMap { $0.split(separator: " ").last.map(String.init) }
            let beyond = Set(imports).subtracting(Self.allowed[module]!).subtracting(Self.system)
            #expect(beyond.isEmpty, "\(module)/\(file) imports \(beyond.sorted())")
        }
    }
}
