//go:build teacher

package main

// teacherCommands adds 'lab guide' and 'lab check --reveal' to a teacher
// build (go build -tags teacher ./cmd/streamha).
var teacherCommands teacherFunc = addTeacherCommands
