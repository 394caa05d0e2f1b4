// coffer-unlock-flood: what a flood of wrong passwords costs cofferd, and everyone else.
//
// Starts the real cofferd (this build's, or --cofferd PATH) on a private bus, locks `login`,
// and has --attackers N clients (200 by default, each its own connection) send a wrong
// password at once over gnome-keyring's internal interface (UnlockWithMasterPassword). For
// --seconds S (40) it samples, once a second: how many guesses cofferd has checked (the
// collection's attempts file) against what the unlock throttle's schedule allows in that time
// (a guess at 0, 1, 3, 7, 15 … s), cofferd's threads and RSS (/proc/PID/status), and how long
// another client waits for a new collection (CreateWithMasterPassword, an Argon2id
// derivation like the guesses'). It prints the peaks and the median and worst wait.
// A measurement, not a test; run a release build as a normal user:
//
//   swift build -c release && .build/release/coffer-unlock-flood [--attackers 200] [--seconds 40]
import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import SystemKit

var attackers = 200, seconds = 40
var cofferd = Executables.built("cofferd")
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--attackers": attackers = Int(arguments.next() ?? "") ?? 0
    case "--seconds": seconds = Int(arguments.next() ?? "") ?? 0
    case "--cofferd": cofferd = arguments.next()
    default: attackers = 0
    }
}
guard attackers > 0, seconds > 0, let cofferd else {
    print("usage: coffer-unlock-flood [--attackers 200] [--seconds 40] [--cofferd PATH]")
    exit(2)
}

let bus = try PrivateBus()
let root = NSTemporaryDirectory() + "coffer-unlock-flood-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: root + "/data", withIntermediateDirectories: true)
let daemon = try ChildProcess(cofferd, arguments: ["--foreground", "--unlock", "--data-dir", root + "/data", "--pinentry", root + "/none"],
                              environment: bus.environment(["HOME": root]), stdin: Array("right password".utf8))
try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: daemon)
defer {
    daemon.terminate(grace: 5)
    bus.stop()
    try? FileManager.default.removeItem(atPath: root)
}
let login = SecretPath.collection(named: "login")
let owner = SecretServiceClient(connection: try DBusConnection(address: bus.address))
_ = try owner.lock([login])

/// `Threads:` and `VmRSS:` (kB) of cofferd's /proc/PID/status.
func status() -> (threads: Int, rssKiB: Int) {
    let text = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Int {
        text.split(separator: "\n").first { $0.hasPrefix(name) }
            .flatMap { Int($0.dropFirst(name.count).filter(\.isNumber)) } ?? 0
    }
    return (field("Threads:"), field("VmRSS:"))
}

// The attackers: one program, a connection and a thread per guess.
let before = status()
let started = Date()
let attack = try ChildProcess("/usr/bin/python3", arguments: ["-c", WrongPasswordFlood.script(count: attackers)], environment: bus.environment(["HOME": root]))
defer { attack.send(signal: SIGKILL) }

var peakThreads = 0, peakRSS = 0, waits: [Double] = []
let other = SecretServiceClient(connection: try DBusConnection(address: bus.address))
let otherSession = try other.openSession()
for second in 1...seconds {
    let asked = Date()
    _ = try other.createCollection(label: "other \(second)", password: try SecureBytes(Array("other".utf8)), session: otherSession)
    waits.append(Date().timeIntervalSince(asked))
    let now = status()
    peakThreads = max(peakThreads, now.threads)
    peakRSS = max(peakRSS, now.rssKiB)
    let next = started.addingTimeInterval(Double(second))
    if next > Date() { Thread.sleep(until: next) }
}
let elapsed = Date().timeIntervalSince(started)
let checked = WrongPasswordFlood.wrongPasswordsCounted(inAttemptsFile: root + "/data/login.attempts")
let allowed = Int(log2(elapsed + 1)) + 1
waits.sort()
print("""
    \(attackers) clients of one program sent a wrong password at once; \(attack.stdout.split(separator: "\n").count { $0.hasSuffix("LimitsExceeded") }) were refused at once (too many of its checks waiting)
    guesses checked in \(String(format: "%.1f", elapsed)) s: \(checked) (the schedule allows \(allowed))\(checked <= allowed ? "" : "  OVER")
    cofferd threads: \(before.threads) before, at most \(peakThreads) during\(peakThreads <= 16 ? "" : "  OVER 16")
    cofferd RSS: \(before.rssKiB / 1024) MB before, at most \(peakRSS / 1024) MB during\(peakRSS <= 300 * 1024 ? "" : "  OVER 300 MB")
    another client's new collection (Argon2id) took: median \(String(format: "%.3f", waits[waits.count / 2])) s, worst \(String(format: "%.3f", waits.last ?? 0)) s\((waits.last ?? 0) <= 1 ? "" : "  OVER 1 s")
    """)
