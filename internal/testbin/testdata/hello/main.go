// Command hello prints its arguments: a main package for testbin's tests.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() { fmt.Println("hello " + strings.Join(os.Args[1:], " ")) }
