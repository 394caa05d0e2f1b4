import CofferCrypto
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

    let pid: pid_t
    private let name: String
    private let deadline: ContinuousClock.Instant
    /// Our ends of the child's stdin (write) and stdout (read); -1 once closed.
    private var toChild: Int32
    private var fromChild: Int32
    /// Set once the child is reaped (or found gone); `status` is its raw wait status if known.
    private var reaped = false
    private var status: Int32?

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

        let input = try Self.cloexecPipe()     // child's stdin
        let output: (read: Int32, write: Int32)
        do { output = try Self.cloexecPipe() } catch {
            close(input.read); close(input.write)
            throw error
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        PosixSpawnExtras.addCloseFrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = [path]
        let env = environment.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let rc = withCStringArray(argv) { cargv in
            withCStringArray(env) { cenv in
                posix_spawn(&child, path, &actions, &attributes, cargv, cenv)
            }
        }
        close(input.read)
        close(output.write)
        guard rc == 0 else {
            close(input.write)
            close(output.read)
            throw .system("posix_spawn", rc)
        }
        pid = child
        toChild = input.write
        fromChild = output.read
        _ = fcntl(toChild, F_SETFL, fcntl(toChild, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fromChild, F_SETFL, fcntl(fromChild, F_GETFL) | O_NONBLOCK)

        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.bufferSize)
        buffer.initialize(repeating: 0, count: Self.bufferSize)
        bufferLocked = mlock(buffer, Self.bufferSize) == 0
    }

    deinit {
        if !reaped { _ = kill() }
        releaseBuffer()
    }

    private static func cloexecPipe() throws(PinentryFailure) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard PosixSpawnExtras.pipe2(&fds, O_CLOEXEC) == 0 else { throw .system("pipe2", errno) }
        return (fds[0], fds[1])
    }

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
        if toChild >= 0 && !reaped {
            let polite = ContinuousClock.now.advanced(by: .seconds(1))
            if (try? send("BYE", until: min(polite, deadline))) != nil {
                _ = try? readReply(pin: nil, until: min(polite, deadline))
            }
        }
        closeFDs()
        let grace = ContinuousClock.now.advanced(by: .seconds(2))
        while !reaped, ContinuousClock.now < grace {
            if reap(blocking: false) { break }
            usleep(2_000)
        }
        if !reaped { _ = kill() }
        releaseBuffer()
    }

    /// Closes our ends, gives the child `grace` to exit by itself, then SIGKILLs and reaps it.
    /// Returns the raw wait status (nil if it could not be had, e.g. SIGCHLD is ignored).
    @discardableResult
    func kill(grace: Duration = .zero) -> Int32? {
        closeFDs()
        let limit = ContinuousClock.now.advanced(by: grace)
        while !reap(blocking: false) && ContinuousClock.now < limit { usleep(2_000) }
        if !reap(blocking: false) {
            _ = sendSignal(pid, SIGKILL)
            killedByUs = true
            _ = reap(blocking: true)
        }
        releaseBuffer()
        return status
    }

    /// Whether `kill` had to SIGKILL the child (so its status says nothing about why it stopped).
    private(set) var killedByUs = false

    /// Reaps the child if it has exited (waiting for that if `blocking`); true once reaped.
    private func reap(blocking: Bool) -> Bool {
        if reaped { return true }
        var raw: Int32 = 0
        while true {
            let r = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            if r == pid { status = raw; reaped = true; return true }
            if r == 0 { return false }
            if errno == EINTR { continue }
            // ECHILD: someone else reaped it (or SIGCHLD is ignored); either way it is gone.
            reaped = true
            return true
        }
    }

    private func closeFDs() {
        if toChild >= 0 { close(toChild); toChild = -1 }
        if fromChild >= 0 { close(fromChild); fromChild = -1 }
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
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            guard toChild >= 0 else { throw .childGone }
            let fd = toChild
            let (written, code) = bytes[offset...].withUnsafeBytes { writeWithoutSIGPIPE(fd, $0.baseAddress, $0.count) }
            if written > 0 { offset += written; continue }
            if written == 0 || code == EAGAIN {
                try waitFor(toChild, events: POLLOUT, until: limit ?? deadline)
                continue
            }
            if code == EINTR { continue }
            if code == EPIPE { throw .childGone }
            throw .system("write", code)
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
            guard fromChild >= 0 else { throw .childGone }
            let count = read(fromChild, buffer + end, Self.bufferSize - end)
            if count > 0 { end += count; continue }
            if count == 0 { throw .childGone }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN { try waitFor(fromChild, events: POLLIN, until: limit); continue }
            throw .system("read", code)
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

    /// Waits until `fd` is ready for `events` (or hung up), or throws `.timedOut` at `limit`.
    private func waitFor(_ fd: Int32, events: Int32, until limit: ContinuousClock.Instant) throws(PinentryFailure) {
        while true {
            let left = limit - ContinuousClock.now
            if left <= .zero { throw .timedOut }
            let (seconds, attoseconds) = left.components
            let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
            let n = poll(&descriptor, 1, Int32(clamping: millis))
            if n > 0 { return }
            if n < 0 && errno != EINTR { throw .system("poll", errno) }
        }
    }
}

/// `write` that turns a closed pipe into EPIPE instead of a process-killing SIGPIPE, without
/// touching the process-wide disposition: SIGPIPE is blocked in this thread for the call and a
/// SIGPIPE the write raised is consumed before unblocking.
/// Returns what `write` returned and its errno.
private func writeWithoutSIGPIPE(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> (Int, Int32) {
    var pipeSet = sigset_t()
    sigemptyset(&pipeSet)
    sigaddset(&pipeSet, SIGPIPE)
    var old = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSet, &old)
    var pendingBefore = sigset_t()
    sigpending(&pendingBefore)
    let alreadyPending = sigismember(&pendingBefore, SIGPIPE) == 1
    let written = write(fd, bytes, count)
    let code = errno
    if written < 0 && code == EPIPE && !alreadyPending {
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&pipeSet, nil, &zero) < 0 && errno == EINTR {}
    }
    pthread_sigmask(SIG_SETMASK, &old, nil)
    return (written, code)
}

/// `kill(2)` (the conversation's own `kill()` hides the name inside the class).
private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }

/// glibc functions Swift's Glibc module does not export (they need `_GNU_SOURCE`).
private enum PosixSpawnExtras {
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)   // RTLD_DEFAULT
    }

    /// `pipe2`, falling back to `pipe` + FD_CLOEXEC (racy against concurrent spawns, but only
    /// on a libc without pipe2).
    static func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32 {
        if let sym = symbol("pipe2") { return unsafeBitCast(sym, to: Pipe2.self)(fds, flags) }
        guard pipe(fds) == 0 else { return -1 }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return 0
    }

    /// Adds "close every descriptor >= `lowest`" to the spawn actions if glibc has it (2.34+).
    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) {
        guard let sym = symbol("posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(sym, to: AddCloseFrom.self)(actions, lowest)
    }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}
