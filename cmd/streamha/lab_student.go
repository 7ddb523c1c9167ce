//go:build !teacher

package main

// teacherCommands is nil in the binary students install: it has no
// 'lab guide' and no 'lab check --reveal' (see lab_teacher.go).
var teacherCommands teacherFunc
