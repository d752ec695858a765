package main

// The machine's speed at the moment of a run, measured where the brokers spend most of their
// CPU: the kernel moving bytes through loopback sockets, and the round trip of a small message
// (the syscalls and wake-ups an unbatched message costs). Most of a broker's CPU per message
// is in those syscalls, and on the 2-CPU reference machine the same code measured twice as
// slow on some days as on others: the broker's CPU per message, the absolute rates and the
// latencies moved with the machine. These figures, taken before the runs and after them, put a
// number on it, so that two runs of this file can be compared.

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// machineSpeed is one reading of the machine's speed.
type machineSpeed struct {
	// streamCPU is the process's CPU (user and system) per MiB written through one loopback TCP
	// connection in 128 KiB writes and read at the other end with a 64 KiB buffer, the median
	// of speedStreams streams; streamRate is the MiB that stream moved a second.
	streamCPU  time.Duration
	streamRate float64
	// pingRTT is the median round trip of a 64-byte message echoed by the other end of a
	// loopback connection; pingCPU is the process's CPU per round trip, both ends together.
	pingRTT, pingCPU time.Duration
}

const (
	// speedStreamBytes is what the stream moves: a quarter of a second or so at the speed of
	// the reference machine, long enough for its CPU time to be read to a percent.
	speedStreamBytes = 256 << 20
	speedStreams     = 3
	speedPings       = 20_000
	speedWrite       = 128 << 10 // a batch of the official client's default size
	speedRead        = 64 << 10
	speedPingSize    = 64
	// speedTimeout bounds each half of the probe: a machine too slow for it is a failure
	// to report, not a run to wait for.
	speedTimeout = time.Minute
)

// measureMachineSpeed moves streamBytes through a loopback connection speedStreams times, then
// times pings round trips on another. The process should be otherwise idle: its CPU is the figure.
func measureMachineSpeed(streamBytes, pings int) (*machineSpeed, error) {
	s := &machineSpeed{}
	// The stream's CPU varied by a third between readings taken one after the other: its
	// figure is the median of speedStreams.
	type reading struct {
		cpu  time.Duration
		rate float64
	}
	rs := make([]reading, speedStreams)
	for i := range rs {
		var err error
		if rs[i].cpu, rs[i].rate, err = loopbackStream(streamBytes); err != nil {
			return nil, fmt.Errorf("loopback stream: %w", err)
		}
	}
	slices.SortFunc(rs, func(a, b reading) int { return cmp.Compare(a.cpu, b.cpu) })
	s.streamCPU, s.streamRate = rs[len(rs)/2].cpu, rs[len(rs)/2].rate
	var err error
	if s.pingRTT, s.pingCPU, err = loopbackPings(pings); err != nil {
		return nil, fmt.Errorf("loopback round trips: %w", err)
	}
	return s, nil
}

// loopbackStream returns the CPU per MiB and the MiB/s of streaming n bytes.
func loopbackStream(n int) (cpuPerMiB time.Duration, mibPerSec float64, err error) {
	w, r, err := loopbackPair()
	if err != nil {
		return 0, 0, err
	}
	defer w.Close()
	defer r.Close()
	read := make(chan error, 1)
	cpu0, err := selfCPU()
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	go func() { // ends with the stream, or when the deferred Close fails its read
		buf := make([]byte, speedRead)
		for got := 0; got < n; {
			k, err := r.Read(buf)
			if got += k; err != nil && got < n {
				read <- err
				return
			}
		}
		read <- nil
	}()
	chunk := make([]byte, speedWrite)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(len(chunk), left)]); err != nil {
			return 0, 0, err
		}
	}
	if err := <-read; err != nil {
		return 0, 0, err
	}
	took := time.Since(t0)
	cpu1, err := selfCPU()
	if err != nil {
		return 0, 0, err
	}
	cpu := cpu1 - cpu0
	mib := float64(n) / (1 << 20)
	return time.Duration(float64(cpu) / mib), mib / took.Seconds(), nil
}

// loopbackPings returns the median round trip and the CPU per round trip of pings messages
// echoed back.
func loopbackPings(pings int) (rtt, cpuPerPing time.Duration, err error) {
	c, echo, err := loopbackPair()
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	defer echo.Close()
	echoed := make(chan error, 1)
	go func() { // ends after pings echoes, or when the deferred Close fails its read
		buf := make([]byte, speedPingSize)
		for range pings {
			if _, err := io.ReadFull(echo, buf); err != nil {
				echoed <- err
				return
			}
			if _, err := echo.Write(buf); err != nil {
				echoed <- err
				return
			}
		}
		echoed <- nil
	}()
	msg := make([]byte, speedPingSize)
	rtts := make([]time.Duration, pings)
	cpu0, err := selfCPU()
	if err != nil {
		return 0, 0, err
	}
	for i := range rtts {
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return 0, 0, err
		}
		if _, err := io.ReadFull(c, msg); err != nil {
			return 0, 0, err
		}
		rtts[i] = time.Since(start)
	}
	cpu1, err := selfCPU()
	if err != nil {
		return 0, 0, err
	}
	if err := <-echoed; err != nil {
		return 0, 0, err
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], (cpu1 - cpu0) / time.Duration(pings), nil
}

// loopbackPair returns both ends of a fresh TCP connection on 127.0.0.1, each with a deadline
// speedTimeout away.
func loopbackPair() (dialed, accepted net.Conn, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	type acceptResult struct {
		c   net.Conn
		err error
	}
	got := make(chan acceptResult, 1)
	go func() { // ends with the one accept, or with ln's close
		c, err := ln.Accept()
		got <- acceptResult{c, err}
	}()
	dialed, err = net.DialTimeout("tcp", ln.Addr().String(), speedTimeout)
	if err != nil {
		ln.Close()
		<-got
		return nil, nil, err
	}
	a := <-got
	if a.err != nil {
		dialed.Close()
		return nil, nil, a.err
	}
	deadline := time.Now().Add(speedTimeout)
	dialed.SetDeadline(deadline)
	a.c.SetDeadline(deadline)
	return dialed, a.c, nil
}

// speedText is the header's line of the machine's speed before and after the runs.
func speedText(before, after *machineSpeed) string {
	reading := func(s *machineSpeed) string {
		if s == nil {
			return notMeasured
		}
		return fmt.Sprintf("%s MiB/s at %.0f µs of CPU per MiB; %.1f µs a round trip (%.1f µs of CPU)",
			thousands(int(s.streamRate)), float64(s.streamCPU)/float64(time.Microsecond),
			float64(s.pingRTT)/float64(time.Microsecond), float64(s.pingCPU)/float64(time.Microsecond))
	}
	return fmt.Sprintf("- Machine speed (`bench/machinespeed.go`), loopback TCP in the bench's process: %d KiB writes streamed, "+
		"and a %d-byte message echoed back. Before the runs: %s. After them: %s. "+
		"The broker's CPU per message, the absolute rates and the latencies below move with these figures: "+
		"compare them before comparing two runs.\n",
		speedWrite>>10, speedPingSize, reading(before), reading(after))
}
