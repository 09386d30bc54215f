package main

import (
	"errors"
	"io"
)

func comparePreemptCmd(args []string, out io.Writer) error {
	return errors.New("compare-preempt: not implemented yet")
}
