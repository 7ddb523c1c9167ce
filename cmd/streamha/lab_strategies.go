package main

// The teaching labs' student strategies, registered by the command that
// runs the labs and not by the production registry (strategies/all).
// Lab 5's student edits labs/05-own-strategy/mystrategy and rebuilds this
// command: while their code does not compile, only this command's build
// fails; the registry, the simulator, the reports and their tests never
// import it (internal/layout's TestLayout checks that no other package
// does).
import _ "github.com/streamha/streamha/labs/05-own-strategy/mystrategy"
