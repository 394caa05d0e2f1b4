import ArgumentParser
import CofferCore

/// The root command: `coffer <subcommand>`.
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Store and retrieve secrets in Coffer's encrypted collections.",
        discussion: """
        Coffer keeps secrets (passwords, tokens, keys) as items in encrypted collections. \
        An item has a label, a set of attributes (name=value pairs such as service=github.com \
        and account=alice, by which it is found) and a secret. Each collection is encrypted \
        with its own password; the collection named by the 'default' alias (else 'login') \
        is used unless --collection says otherwise.

        When cofferd (or another Secret Service) is running, coffer talks to it over the \
        session bus: a collection it has unlocked needs no password, 'unlock' leaves a \
        collection unlocked there and 'lock' locks it again. Otherwise, and always with \
        --data-dir, coffer works directly on the store files: every command that reads or \
        changes items asks for the collection password again, and nothing stays unlocked \
        afterwards.

        THE DAEMON
          coffer uses the daemon when, without --data-dir, someone owns
          org.freedesktop.secrets on the session bus ($DBUS_SESSION_BUS_ADDRESS,
          else $XDG_RUNTIME_DIR/bus); it never starts one. Passwords and secrets
          cross the bus encrypted (a dh-ietf1024-sha256-aes128-cbc-pkcs7
          session). The commands, options, output and exit statuses are the
          same in both modes; a locked collection's password is asked as usual
          and unlocks it in the daemon. Collection ids follow the same rule in
          both modes (see 'coffer create-collection --help'). Errors from the
          daemon map to the statuses below (a request it refuses as invalid: 2;
          the daemon failing or gone: 5).

        PASSWORDS AND SECRETS
          Collection passwords are never taken from the command line or the
          environment. On a terminal, coffer asks for them without echo on
          /dev/tty (new passwords twice). In scripts, pass --password-stdin:
          the first line of stdin is the password (for 'passwd', line 1 is the
          current password and line 2 the new one). For 'add' and
          'update --secret', the secret is the rest of stdin after that line.
          Without a terminal and without --password-stdin, commands that need
          a password fail with exit status 2. When the daemon has the
          collection unlocked already, no password is asked; a password line
          given with --password-stdin is then read and ignored.

          A secret is typed at a no-echo prompt (twice) when stdin is a
          terminal. Otherwise it is read from stdin to end of file, and one
          trailing newline is dropped unless --raw is given.

        EXIT STATUS
          0  success (also: 'delete' that matched nothing)
          1  not found: no item matched, or no such collection
          2  usage error: no command or an unknown one (coffer alone prints
             a short usage), bad option or argument, no way to read a
             password, confirmation missing or declined, secret empty or
             too large
          3  locked: wrong password, or the collection is locked (also:
             'search --all-collections' left a collection locked)
          4  already exists: an item with the same attributes (see
             'add --replace'), or a collection with the same id
          5  store damaged, or an I/O or system error (or the daemon failed)
          6  'doctor' found a problem (its output says what to fix)
          7  refused: cofferd did not let coffer read a secret (the
             collection's policy, or the user, refused; the message says
             what would allow it)
          Errors are one line on stderr starting with "coffer: ".

        FILES
          Without the daemon, the store directory is --data-dir, else
          $COFFER_DATA_DIR, else $XDG_DATA_HOME/coffer, else
          ~/.local/share/coffer. It holds one <id>.coffer file per
          collection, <id>.lock files (which also note how far each
          collection's acknowledged changes reach), an 'aliases' file and
          the audit log (audit.log, with at most two older audit.log.1 and
          .2; see 'coffer log'); the directory is mode 0700 and the files
          0600.

        ACCESS
          Each item remembers the application that created it; a collection's
          policy says whether other applications may read its secrets (open),
          must be allowed by the user first (ask, the default for new
          collections), or need a grant (strict). See 'coffer policy' and
          'coffer access'.

        EXAMPLES
          Create the default collection (asks for a new password twice):
            coffer create-collection --collection login
          Store a password (asks for the collection password, then the secret):
            coffer add --service github.com --account alice
          Store a token from a script:
            printf '%s\\n%s' "$PASSWORD" "$TOKEN" |
              coffer add --password-stdin --service api --account bot
          Print one secret, for use in a script:
            coffer search --service github.com --account alice --secret-only
          List every item of a collection as JSON:
            coffer search --all --json --collection work
          Check that Coffer serves this session, and what to fix if not:
            coffer doctor
          Find an item in whichever collection holds it (as secret-tool does):
            coffer search --all-collections --service github.com

        Every command that works on one collection takes --collection ID
        (lock, unlock, passwd, create-collection, delete-collection and alias
        set also take it as an argument, as before).
        """,
        version: CofferVersion.current,
        subcommands: [
            Add.self, Search.self, Update.self, Delete.self,
            Collections.self, CreateCollection.self, DeleteCollection.self,
            Lock.self, Unlock.self, Passwd.self, Slots.self, Recover.self, Sync.self, Alias.self, Policy.self, Access.self, Otp.self, Import.self, Export.self,
            Doctor.self, AuditLog.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    /// No command given.
    func run() throws {
        throw ShortUsage()
    }
}
