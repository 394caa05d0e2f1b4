/// Coffer's version: the one place it is written. `coffer --version`, `cofferd --version`,
/// the man pages and the Debian package (scripts/package-deb reads it from here) all take it.
public enum CofferVersion {
    public static let current = "0.4.0"
}
