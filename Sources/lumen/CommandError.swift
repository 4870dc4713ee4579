/// An error in a command's work, after its arguments were accepted (a file that cannot be read,
/// a port in use): reported as `Error: …` with exit status 1 and, unlike a usage error
/// (`ValidationError`), without the command's usage.
struct CommandError: Error, CustomStringConvertible {
    /// What went wrong, naming what it concerns.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
