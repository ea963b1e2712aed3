/// Earshot's version: the one place it is written. `earshot --version` prints it, and
/// `scripts/install` and `scripts/package` read it from the built binary, so the package's
/// version is always that of the binary it holds.
let earshotVersion = "0.1.0"
