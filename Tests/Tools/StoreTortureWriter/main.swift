// Test tool: adds items to a collection as fast as it can and prints each item's number on
// stdout once the store reported it durable. Crash and concurrency tests kill it with
// SIGKILL or run several at once, then check that every printed item is there.
//
// usage: StoreTortureWriter DIRECTORY COLLECTION PREFIX COUNT   (password on stdin)
import CofferCore
import CofferCrypto
import CofferStore
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, let collection = CollectionID(arguments[2]), let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: StoreTortureWriter DIRECTORY COLLECTION PREFIX COUNT\n".utf8))
    exit(2)
}
let prefix = arguments[3]
do {
    var password = Array(FileHandle.standardInput.readDataToEndOfFile())
    let keychain = Keychain(provider: try FileStore(directory: arguments[1]))
    try keychain.unlock(collection, password: try SecureBytes(wiping: &password))
    for n in 0..<count {
        let item = NewItem(label: "\(prefix) \(n)", attributes: ["writer": prefix, "n": String(n)],
                           secret: Secret(bytes: try SecureBytes(Array("\(prefix)-secret-\(n)".utf8))))
        try keychain.add(item, to: collection)
        FileHandle.standardOutput.write(Data("\(n)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("StoreTortureWriter: \(error)\n".utf8))
    exit(1)
}
