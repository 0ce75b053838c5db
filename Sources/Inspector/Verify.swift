import ArgumentParser

struct Verify: ParsableCommand { func run() throws {} }
