import CofferCrypto
public final class Pinentry: PasswordAsker {
    public init(program: String?) {}
    public func ask(_ request: PasswordRequest) -> PasswordAnswer { .unavailable("stub") }
}
