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
        if error is CLIError || error is CofferError || error is CryptoError {
            let failure = CLIError.from(error)
            Output.note(failure.message)
            return failure.status
        }
        let code = CofferCommand.exitCode(for: error)
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

    /// `coffer <subcommand> --help` for the subcommand named on the command line.
    static func helpCommand() -> String {
        let names = CofferCommand.configuration.subcommands.compactMap { $0.configuration.commandName }
        let arguments = CommandLine.arguments.dropFirst()
        if let name = arguments.first(where: { names.contains($0) }) { return "coffer \(name) --help" }
        return "coffer --help"
    }

    static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, first.isUppercase,
              text.dropFirst().first.map({ !$0.isUppercase }) ?? true else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

