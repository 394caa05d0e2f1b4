// Test tool: adds items to a collection as fast as it can and prints each item's number on
// stdout once the store reported it durable. Crash and concurrency tests kill it with
// SIGKILL or run several at once, then check that every printed item is there.
//
// usage: StoreTortureWriter DIRECTORY COLLECTION PREFIX COUNT [MAX_FILE_BYTES]   (password on stdin)
// With MAX_FILE_BYTES, files may not grow past that size (RLIMIT_FSIZE), as on a full disk.
// `StoreTortureWriter --audit ...` records audit events instead (see AuditWriter.swift).
import CofferCore
import CofferCrypto
import CofferStore
import Foundation

let arguments = CommandLine.arguments
if arguments.count > 1 && arguments[1] == "--audit" { exit(AuditWriter.run(Array(arguments.dropFirst(2)))) }
guard (5...6).contains(arguments.count), let collection = CollectionID(arguments[2]), let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: StoreTortureWriter DIRECTORY COLLECTION PREFIX COUNT [MAX_FILE_BYTES]\n".utf8))
    exit(2)
}
if arguments.count == 6, let limit = rlim_t(arguments[5]) {
    signal(SIGXFSZ, SIG_IGN)   // a write past the limit then fails with EFBIG instead of killing us
    var fileSize = rlimit(rlim_cur: limit, rlim_max: limit)
    setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &fileSize)
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
