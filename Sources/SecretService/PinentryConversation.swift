import CofferCrypto
import SystemKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One pinentry child and the Assuan conversation with it (client side).
///
/// Not thread-safe: one `Pinentry.ask` owns it. Every wait is bounded by `deadline`. Incoming
/// bytes are read straight into a fixed buffer in secure memory, from which each line is
/// removed (and so zeroed) once consumed and which is wiped when the conversation ends, so the
/// PIN (which arrives percent-escaped in `D` lines) never lands in ordinary memory; it is
/// decoded straight into `SecureBytes`.
final class PinentryConversation {
    /// A final answer to one command.
    enum Reply {
        case ok
        case err(code: UInt32, text: String)
    }

    /// Longest line we send, without the newline (Assuan allows 1000 bytes including it).
    static let maxLineBytes = 998
    /// Receive buffer size: several maximal Assuan lines.
    private static let bufferSize = 4096

    /// The pinentry process (`Pinentry.closeDialogs` signals it from another thread).
    let child: Subprocess
    private let name: String
    private let deadline: ContinuousClock.Instant
    /// Our ends of the child's stdin and stdout (non-blocking); nil once closed.
    private var toChild: FileDescriptor?
    private var fromChild: FileDescriptor?

    /// Bytes received and not yet consumed (at most `bufferSize`).
    private let received: SecureBytes

    /// Whether the last GETPIN reported `S PIN_REPEATED` (the pinentry did the confirmation).
    private var sawRepeated = false

    // MARK: Starting

    /// Starts `path` with `environment` as its whole environment, stdin and stdout on pipes,
    /// stderr inherited, no other descriptors, an empty signal mask and default dispositions.
    init(path: String, environment: [String: String], deadline: ContinuousClock.Instant) throws(PinentryFailure) {
        name = path.split(separator: "/").last.map(String.init) ?? path
        self.deadline = deadline
        do { received = try SecureBytes(capacity: Self.bufferSize) } catch { throw .failed("cannot allocate secure memory") }
        let input: (readEnd: FileDescriptor, writeEnd: FileDescriptor)      // the child's stdin
        let output: (readEnd: FileDescriptor, writeEnd: FileDescriptor)     // the child's stdout
        do throws(Errno) {
            input = try FileDescriptor.pipe()
            do { output = try FileDescriptor.pipe() } catch {
                input.readEnd.close()
                input.writeEnd.close()
                throw error
            }
        } catch {
            throw .system(error)
        }
        defer {
            input.readEnd.close()
            output.writeEnd.close()
        }
        do {
            try input.writeEnd.setNonBlocking()
            try output.readEnd.setNonBlocking()
            child = try Subprocess(path, environment: environment,
                                   standardInput: input.readEnd, standardOutput: output.writeEnd)
        } catch {
            input.writeEnd.close()
            output.readEnd.close()
            throw .system(error)
        }
        toChild = input.writeEnd
        fromChild = output.readEnd
    }

    deinit { kill() }

    // MARK: Commands

    /// Sends `name` followed by `text` percent-escaped (and shortened to fit an Assuan line),
    /// and waits for OK. See `command(_:required:)`.
    func command(_ name: String, _ text: String, required: Bool = true) throws(PinentryFailure) {
        let room = Self.maxLineBytes - name.utf8.count - 1
        try command(text.isEmpty ? name : name + " " + PinentryEscaping.escapedLine(text, room: room),
                    required: required)
    }

    /// Sends one line (no newline; already escaped) and waits for its OK. An ERR meaning
    /// "cancelled" throws `.cancelled`; other ERRs throw `.failed` if `required`, else are ignored.
    func command(_ line: String, required: Bool = true) throws(PinentryFailure) {
        try send(line)
        if case .err(let code, let text) = try readReply(pin: nil) {
            try Self.check(code: code, text: text, program: name, required: required)
        }
    }

    /// Sends GETPIN and returns the PIN (empty if the user entered none) and whether the
    /// pinentry itself confirmed it (`S PIN_REPEATED`).
    func getPin() throws(PinentryFailure) -> (pin: SecureBytes, repeated: Bool) {
        let pin: SecureBytes
        do { pin = try SecureBytes(capacity: 64) } catch { throw .failed("cannot allocate secure memory") }
        sawRepeated = false
        try send("GETPIN")
        if case .err(let code, let text) = try readReply(pin: pin) {
            pin.removeAll()
            try Self.check(code: code, text: text, program: name, required: true)
        }
        return (pin, sawRepeated)
    }

    /// What the user chose in a CONFIRM dialog.
    enum Confirmation {
        /// The OK button.
        case confirmed
        /// The third button (SETNOTOK).
        case notConfirmed
    }

    /// Sends CONFIRM: OK is `.confirmed`, the SETNOTOK button `.notConfirmed`, Cancel throws
    /// `.cancelled`.
    func confirm() throws(PinentryFailure) -> Confirmation {
        try send("CONFIRM")
        guard case .err(let code, let text) = try readReply(pin: nil) else { return .confirmed }
        if code & 0xFFFF == 114 { return .notConfirmed }   // GPG_ERR_NOT_CONFIRMED
        try Self.check(code: code, text: text, program: name, required: true)
        return .confirmed   // not reached: `check` throws for every required ERR
    }

    /// Maps an ERR to the failure it means.
    private static func check(code: UInt32, text: String, program: String, required: Bool) throws(PinentryFailure) {
        switch code & 0xFFFF {
        case 99, 198:   // GPG_ERR_CANCELED, GPG_ERR_FULLY_CANCELED
            throw .cancelled
        case 62:        // GPG_ERR_TIMEOUT: pinentry's own SETTIMEOUT expired
            throw .failed("pinentry timed out")
        default:
            guard required else { return }
            // Drop the error source tag pinentry appends ("... <Pinentry>").
            var message = Substring(text)
            if message.hasSuffix(">"), let tag = message.ranges(of: " <").last {
                message = message[..<tag.lowerBound]
            }
            throw .failed("\(program) failed: \(message.isEmpty ? "error \(code)" : String(message))")
        }
    }

    // MARK: Ending

    /// Says BYE (briefly waiting for its OK), closes our ends and reaps the child, killing it
    /// if it does not exit within a second or two.
    func finish() {
        if toChild != nil && child.exitStatus() == nil {
            let polite = ContinuousClock.now.advanced(by: .seconds(1))
            if (try? send("BYE", until: min(polite, deadline))) != nil {
                _ = try? readReply(pin: nil, until: min(polite, deadline))
            }
        }
        kill(grace: .seconds(2))
    }

    /// Closes our ends, gives the child `grace` to exit by itself, then SIGKILLs and reaps it.
    /// Returns how it ended.
    @discardableResult
    func kill(grace: Duration = .zero) -> Termination {
        closeFDs()
        var ended = child.wait(timeout: grace)
        if ended == nil {
            child.send(signal: SIGKILL)
            killedByUs = true
            ended = child.wait()
        }
        received.removeAll()
        return ended ?? .unknown
    }

    /// Whether `kill` had to SIGKILL the child (so its status says nothing about why it stopped).
    private(set) var killedByUs = false

    private func closeFDs() {
        toChild?.close()
        toChild = nil
        fromChild?.close()
        fromChild = nil
    }

    // MARK: Writing

    /// Writes `line` and a newline, waiting (until the deadline) while the pipe is full.
    private func send(_ line: String, until limit: ContinuousClock.Instant? = nil) throws(PinentryFailure) {
        let bytes = Array(line.utf8) + [0x0A]
        var offset = 0
        while offset < bytes.count {
            guard let toChild else { throw .childGone }
            do {
                offset += try toChild.writeWithoutSIGPIPE(bytes[offset...])
            } catch .wouldBlock {
                try waitFor(toChild, .writable, until: limit ?? deadline)
            } catch .brokenPipe {
                throw .childGone
            } catch {
                throw .system(error)
            }
        }
    }

    // MARK: Reading

    /// Reads lines until OK or ERR. `D` lines are percent-decoded into `pin` (a protocol error if
    /// nil), `S` status lines and comments are skipped (noting `S PIN_REPEATED`), `INQUIRE` is
    /// answered with `CAN`.
    func readReply(pin: SecureBytes?, until limit: ContinuousClock.Instant? = nil) throws(PinentryFailure) -> Reply {
        while true {
            let (lineEnd, next) = try nextLine(until: limit ?? deadline)
            defer { received.removeFirst(next) }
            if lineEnd >= 1 && received[0] == 0x44 && (lineEnd == 1 || received[1] == 0x20) {   // "D " / "D"
                guard let pin else { throw .protocolError("unexpected data line") }
                do {
                    try pin.append(decoding: min(2, lineEnd)..<lineEnd, of: received, with: PinentryEscaping.assuan)
                } catch {
                    pin.removeAll()
                    throw .failed("cannot allocate secure memory")
                }
                continue
            }
            // Everything else is not secret: handle it as text.
            let text = String(decoding: received.unprotectedArray(0..<lineEnd), as: UTF8.self)
            if text == "OK" || text.hasPrefix("OK ") { return .ok }
            if text == "ERR" || text.hasPrefix("ERR ") {
                let rest = text.dropFirst(4)
                let codeText = rest.prefix { $0 != " " }
                let message = rest.dropFirst(codeText.count).drop { $0 == " " }
                return .err(code: UInt32(codeText) ?? 0, text: PinentryEscaping.percentDecodedText(message))
            }
            if text == "S" || text.hasPrefix("S ") {
                if text.dropFirst(2).split(separator: " ").first == "PIN_REPEATED" { sawRepeated = true }
                continue
            }
            if text.hasPrefix("#") || text.isEmpty { continue }
            if text == "INQUIRE" || text.hasPrefix("INQUIRE ") {
                try send("CAN", until: limit)
                continue
            }
            throw .protocolError("unexpected line from pinentry")
        }
    }

    /// Where the next complete line at the front of `received` ends (without its LF and a CR
    /// before it), and where the line after it starts; reads more as needed.
    private func nextLine(until limit: ContinuousClock.Instant) throws(PinentryFailure) -> (end: Int, next: Int) {
        var scanned = 0
        while true {
            while scanned < received.count {
                if received[scanned] == 0x0A {
                    let lineEnd = scanned > 0 && received[scanned - 1] == 0x0D ? scanned - 1 : scanned
                    return (lineEnd, scanned + 1)
                }
                scanned += 1
            }
            if received.count == Self.bufferSize { throw .protocolError("line too long") }
            guard let fromChild else { throw .childGone }
            let count: Int
            do {
                count = try received.append(readingFrom: fromChild, upTo: Self.bufferSize - received.count)
            } catch Errno.wouldBlock {
                try waitFor(fromChild, .readable, until: limit)
                continue
            } catch let error as Errno {
                throw .system(error)
            } catch {
                throw .failed("cannot allocate secure memory")
            }
            if count == 0 { throw .childGone }
        }
    }

    /// Waits until `descriptor` is ready for `events` (or hung up), or throws `.timedOut` at `limit`.
    private func waitFor(_ descriptor: FileDescriptor, _ events: PollEvents,
                         until limit: ContinuousClock.Instant) throws(PinentryFailure) {
        while true {
            let left = limit - ContinuousClock.now
            if left <= .zero { throw .timedOut }
            let (seconds, attoseconds) = left.components
            let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            do {
                if try !descriptor.poll(for: events, timeoutMilliseconds: Int32(clamping: millis)).isEmpty { return }
            } catch {
                throw .system(error)
            }
        }
    }
}
