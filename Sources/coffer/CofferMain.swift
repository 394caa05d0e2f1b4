import ArgumentParser
import CofferCore
import CofferCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The entry point. Written out (rather than ArgumentParser's own `main`) so that usage
/// errors exit with status 2 and every failure is one `coffer: ` line on stderr.
@main
enum CofferMain {
    static func main() {
        Crypto.disableCoreDumps()
        do {
            var command = try CofferCommand.parseAsRoot()
            try command.run()
            exit(ExitStatus.success)
        } catch {
            exit(report(error))
        }
    }

    /// Prints what went wrong (or the help asked for) and returns the exit status.
    static func report(_ error: any Error) -> Int32 {
        if error is ShortUsage {
            Output.write(Array(ShortUsage.text.utf8), to: .standardError)
            return ExitStatus.usage
        }
        if error is CLIError || error is CofferError || error is CryptoError {
            let failure = CLIError.from(error)
            Output.note(failure.message)
            return failure.status
        }
        let code = CofferCommand.exitCode(for: error)
        // A mistyped command is named with the closest real one, also in `coffer help serch`
        // (which would otherwise print the whole manual).
        if code == .success || code == .validationFailure,
           let unknown = CommandWords.unknownCommandMessage(Array(CommandLine.arguments.dropFirst())) {
            Output.note(unknown)
            return ExitStatus.usage
        }
        if code == .success {
            // --help, help <command>, --version.
            let text = CofferCommand.fullMessage(for: error)
            if !text.isEmpty { Output.line(text) }
            return ExitStatus.success
        }
        let message = CofferCommand.message(for: error)
            .split(whereSeparator: \.isNewline)
            .map { String($0).trimmingWhitespace() }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
        if code == .validationFailure {
            Output.note("\(lowercasedFirst(message)) (see: \(helpCommand()))")
            return ExitStatus.usage
        }
        Output.note("unexpected failure: \(message)")
        return ExitStatus.storeFailure
    }

    /// `coffer <subcommand> --help` for the (sub)command named on the command line.
    static func helpCommand() -> String {
        "\(CommandWords.spelled(CommandWords.read(Array(CommandLine.arguments.dropFirst())).path)) --help"
    }

    static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, first.isUppercase,
              text.dropFirst().first.map({ !$0.isUppercase }) ?? true else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

