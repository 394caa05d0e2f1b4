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
/// bytes are kept in one fixed, locked buffer that is zeroed as lines are consumed and wiped when
/// the conversation ends, so the PIN (which arrives percent-escaped in `D` lines) never lands in
/// growable or unwiped memory; it is decoded straight into `SecureBytes`.
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

    private let child: Subprocess
    private let name: String
    private let deadline: ContinuousClock.Instant
    /// Our ends of the child's stdin and stdout (non-blocking); nil once closed.
    private var toChild: FileDescriptor?
    private var fromChild: FileDescriptor?

    private let buffer: UnsafeMutablePointer<UInt8>
    private let bufferLocked: Bool
    /// Bytes `buffer[start..<end]` are received but not yet consumed.
    private var start = 0
    private var end = 0
    private var released = false

    /// Whether the last GETPIN reported `S PIN_REPEATED` (the pinentry did the confirmation).
    private var sawRepeated = false

    // MARK: Starting

    /// Starts `path` with `environment` as its whole environment, stdin and stdout on pipes,
    /// stderr inherited, no other descriptors, an empty signal mask and default dispositions.
    init(path: String, environment: [String: String], deadline: ContinuousClock.Instant) throws(PinentryFailure) {
        name = path.split(separator: "/").last.map(String.init) ?? path
        self.deadline = deadline
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

        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.bufferSize)
        buffer.initialize(repeating: 0, count: Self.bufferSize)
        bufferLocked = mlock(buffer, Self.bufferSize) == 0
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
            if message.hasSuffix(">"), let tag = message.range(of: " <", options: .backwards) {
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
        releaseBuffer()
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

    private func releaseBuffer() {
        guard !released else { return }
        released = true
        explicit_bzero(buffer, Self.bufferSize)
        if bufferLocked { munlock(buffer, Self.bufferSize) }
        buffer.deallocate()
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
            let (lineStart, lineEnd) = try nextLine(until: limit ?? deadline)
            defer { consume(through: lineEnd) }
            let line = UnsafeBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart)
            if line.starts(with: [0x44, 0x20]) || (line.count == 1 && line[0] == 0x44) {   // "D " / "D"
                guard let pin else { throw .protocolError("unexpected data line") }
                do {
                    try PinentryEscaping.percentDecode(UnsafeBufferPointer(rebasing: line.dropFirst(2)), into: pin)
                } catch {
                    pin.removeAll()
                    throw .failed("cannot allocate secure memory")
                }
                continue
            }
            // Everything else is not secret: handle it as text.
            let text = String(decoding: line, as: UTF8.self)
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

    /// The bounds in `buffer` of the next complete line (without its LF and a CR before it),
    /// reading more as needed.
    private func nextLine(until limit: ContinuousClock.Instant) throws(PinentryFailure) -> (Int, Int) {
        var scanned = start
        while true {
            while scanned < end {
                if buffer[scanned] == 0x0A {
                    var lineEnd = scanned
                    if lineEnd > start && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                    return (start, lineEnd)
                }
                scanned += 1
            }
            if end == Self.bufferSize {
                if start == 0 { throw .protocolError("line too long") }
                compact()
                scanned = end
            }
            guard let fromChild else { throw .childGone }
            let count: Int
            do {
                count = try fromChild.read(into: UnsafeMutableRawBufferPointer(start: buffer + end,
                                                                               count: Self.bufferSize - end))
            } catch .wouldBlock {
                try waitFor(fromChild, .readable, until: limit)
                continue
            } catch {
                throw .system(error)
            }
            if count == 0 { throw .childGone }
            end += count
        }
    }

    /// Drops the line ending at `lineEnd` (and its newline), zeroing its bytes.
    private func consume(through lineEnd: Int) {
        var next = lineEnd
        while next < end && buffer[next] != 0x0A { next += 1 }   // the CR, if any
        next = min(next + 1, end)
        explicit_bzero(buffer + start, next - start)
        start = next
        if start == end { start = 0; end = 0 }
    }

    /// Moves the unconsumed bytes to the front, zeroing where they were.
    private func compact() {
        let count = end - start
        if start > 0 {
            (buffer).update(from: buffer + start, count: count)
            explicit_bzero(buffer + count, end - count)
        }
        start = 0
        end = count
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
