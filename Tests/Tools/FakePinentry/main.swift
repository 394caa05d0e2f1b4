// Test tool: a pinentry that speaks the Assuan protocol on stdin/stdout like the real ones, but
// answers GETPIN from a script instead of asking anyone.
//
// Environment:
//   FAKE_PINENTRY_SCRIPT  file with one answer per line; each GETPIN consumes the first line
//                         (the file is rewritten without it, under flock, so concurrent fakes
//                         share it safely). A missing or empty file answers as CANCEL.
//                         Answers:  CANCEL   -> ERR 83886179 Operation cancelled <Pinentry>
//                                   HANG     -> never answer (for timeout tests)
//                                   FAIL     -> ERR 83886081 General error <Pinentry>
//                                   TIMEOUT  -> ERR 83886142 Timeout <Pinentry>
//                                   EXIT     -> exit(3) without answering
//                                   AFTER <seconds> <pin> -> wait, then answer with <pin>
//                                            (a user who types after the prompt was dismissed)
//                                   anything else is the PIN, sent as percent-escaped D lines
//                                   (an empty line is an empty PIN: OK without D).
//                         CONFIRM (a consent dialog) takes a line too: ONCE (or OK) -> OK,
//                         ALWAYS (or NOTOK) -> ERR 83886194 Not confirmed (the SETNOTOK button),
//                         HANG, EXIT as above, anything else -> cancelled.
//   FAKE_PINENTRY_LOG     file to append to: "PID <pid>" at start, then every command line
//                         received, exactly as received (still percent-escaped), one per line.
//   FAKE_PINENTRY_NO_REPEAT  if set, behave like an old pinentry that ignores SETREPEAT (no
//                         "S PIN_REPEATED").
//
// Like real pinentry it rejects lines over 1000 bytes ("ERR ... Line too long") and forgets
// SETERROR and SETREPEAT after each GETPIN.
import Foundation
import SystemKit

let environment = ProcessInfo.processInfo.environment
let scriptPath = environment["FAKE_PINENTRY_SCRIPT"]
let logPath = environment["FAKE_PINENTRY_LOG"]
let ignoresRepeat = environment["FAKE_PINENTRY_NO_REPEAT"] != nil

func reply(_ line: String) {
    writeOrExit(.standardOutput, Array((line + "\n").utf8))
}

func writeOrExit(_ descriptor: FileDescriptor, _ bytes: [UInt8]) {
    do { try descriptor.writeAll(bytes) } catch { exit(4) }
}

/// Runs `body` with `path` open and exclusively flocked.
func withLockedFile<R>(_ path: String, _ mode: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
                       _ body: (FileDescriptor) -> R) -> R? {
    guard let file = try? FileDescriptor.open(path, mode, options: options) else { return nil }
    defer { file.close() }
    guard (try? file.lock(.exclusive)) != nil else { return nil }
    defer { file.unlock() }
    return body(file)
}

func logLine(_ line: String) {
    guard let logPath else { return }
    _ = withLockedFile(logPath, .writeOnly, options: [.append, .create]) { file in
        writeOrExit(file, Array((line + "\n").utf8))
    }
}

/// Takes the first line off the script file.
func nextAnswer() -> String? {
    guard let scriptPath else { return nil }
    return withLockedFile(scriptPath, .readWrite) { file -> String? in
        guard let content = try? file.readAll(), !content.isEmpty else { return nil }
        let newline = content.firstIndex(of: 0x0A)
        let first = content[..<(newline ?? content.endIndex)]
        let rest = newline.map { Array(content[($0 + 1)...]) } ?? []
        try? file.truncate(to: 0)
        try? file.writeAll(rest, at: 0)
        return String(decoding: first, as: UTF8.self)
    } ?? nil
}

/// Sends `pin` as Assuan D lines: %, CR, LF and other control bytes escaped, at most 1000 bytes
/// a line (a line boundary may split a UTF-8 sequence: Assuan data is bytes).
func sendData(_ pin: String) {
    let escaping = PercentEncoding(uppercase: true) { $0 >= 0x20 }
    let tokens = pin.utf8.map { escaping.encode([$0]) }
    var current: [UInt8] = []
    for token in tokens {
        if current.count + token.count > 1000 - 2 {
            writeOrExit(.standardOutput, [0x44, 0x20] + current + [0x0A])
            current = []
        }
        current += token
    }
    if !current.isEmpty { writeOrExit(.standardOutput, [0x44, 0x20] + current + [0x0A]) }
}

logLine("PID \(getpid())")
reply("OK Pleased to meet you")
var repeatRequested = false

while let line = readLine(strippingNewline: true) {
    logLine(line)
    if line.utf8.count > 1000 {
        reply("ERR 83886343 Line too long <Pinentry>")
        continue
    }
    let command = line.prefix { $0 != " " }.uppercased()
    switch command {
    case "BYE":
        reply("OK closing connection")
        exit(0)
    case "SETREPEAT":
        repeatRequested = !ignoresRepeat
        reply("OK")
    case "GETPIN":
        let repeated = repeatRequested
        repeatRequested = false
        switch nextAnswer() {
        case nil, "CANCEL":
            reply("ERR 83886179 Operation cancelled <Pinentry>")
        case "HANG":
            while true { sleep(1000) }
        case "FAIL":
            reply("ERR 83886081 General error <Pinentry>")
        case "TIMEOUT":
            reply("ERR 83886142 Timeout <Pinentry>")
        case "EXIT":
            exit(3)
        case let line? where line.hasPrefix("AFTER "):
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            usleep(UInt32((Double(parts.count > 1 ? parts[1] : "") ?? 1) * 1_000_000))
            if repeated { reply("S PIN_REPEATED") }
            sendData(parts.count > 2 ? String(parts[2]) : "")
            reply("OK")
        case let pin?:
            if repeated { reply("S PIN_REPEATED") }
            sendData(pin)
            reply("OK")
        }
    case "CONFIRM":
        // The three buttons of a consent dialog: OK, the SETNOTOK button, Cancel.
        switch nextAnswer() {
        case "OK", "ONCE": reply("OK")
        case "NOTOK", "ALWAYS": reply("ERR 83886194 Not confirmed <Pinentry>")
        case "HANG": while true { sleep(1000) }
        case "EXIT": exit(3)
        default: reply("ERR 83886179 Operation cancelled <Pinentry>")
        }
    default:
        reply("OK")
    }
}
exit(0)
