// Copyright 2020-2026 The NATS Authors
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	testservice "github.com/synadia-io/orbit.go/ntf-client"
)

func TestJetStreamNotEnabled(t *testing.T) {
	withServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if _, err := js.AccountInfo(); err != nats.ErrJetStreamNotEnabled {
			t.Fatalf("Did not get the proper error, got %v", err)
		}
	})
}

func TestJetStreamErrors(t *testing.T) {
	t.Run("API error", func(t *testing.T) {
		c := newTester(t)
		accounts := `accounts: {
  JS: {
    jetstream: enabled
    users: [ {user: dlc, password: foo} ]
  },
  IU: {
    users: [ {user: rip, password: bar} ]
  },
}`
		inst := c.CreateServer(t, true,
			testservice.WithAccounts(accounts),
			testservice.WithAuthorization("no_auth_user: rip"),
			testservice.WithSystemAccount(noSystemAccountBody()),
		)
		t.Cleanup(func() { inst.Destroy(t) })

		// wait for JS to be ready using the JS-enabled user
		jsNC := dialInstance(t, inst, nats.UserInfo("dlc", "foo"))
		c.WaitForJetStream(t, jsNC)
		jsNC.Close()

		nc := dialInstance(t, inst)
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AccountInfo()
		// check directly to var (backwards compatible)
		if err != nats.ErrJetStreamNotEnabledForAccount {
			t.Fatalf("Did not get the proper error, got %v", err)
		}

		// matching via errors.Is
		if ok := errors.Is(err, nats.ErrJetStreamNotEnabledForAccount); !ok {
			t.Fatal("Expected ErrJetStreamNotEnabledForAccount")
		}

		// matching wrapped via error.Is
		err2 := fmt.Errorf("custom error: %w", nats.ErrJetStreamNotEnabledForAccount)
		if ok := errors.Is(err2, nats.ErrJetStreamNotEnabledForAccount); !ok {
			t.Fatal("Expected wrapped ErrJetStreamNotEnabled")
		}

		// via classic type assertion.
		jserr, ok := err.(nats.JetStreamError)
		if !ok {
			t.Fatal("Expected a JetStreamError")
		}
		expected := nats.JSErrCodeJetStreamNotEnabledForAccount
		if jserr.APIError().ErrorCode != expected {
			t.Fatalf("Expected: %v, got: %v", expected, jserr.APIError().ErrorCode)
		}
		if jserr.APIError() == nil {
			t.Fatal("Expected APIError")
		}

		// matching to interface via errors.As(...)
		var apierr nats.JetStreamError
		ok = errors.As(err, &apierr)
		if !ok {
			t.Fatal("Expected a JetStreamError")
		}
		if apierr.APIError() == nil {
			t.Fatal("Expected APIError")
		}
		if apierr.APIError().ErrorCode != expected {
			t.Fatalf("Expected: %v, got: %v", expected, apierr.APIError().ErrorCode)
		}
		expectedMessage := "nats: jetstream not enabled for account"
		if apierr.Error() != expectedMessage {
			t.Fatalf("Expected: %v, got: %v", expectedMessage, apierr.Error())
		}

		// an APIError also implements the JetStreamError interface.
		var _ nats.JetStreamError = &nats.APIError{}

		// matching arbitrary custom error via errors.Is(...)
		customErr := &nats.APIError{ErrorCode: expected}
		if ok := errors.Is(customErr, nats.ErrJetStreamNotEnabledForAccount); !ok {
			t.Fatal("Expected wrapped ErrJetStreamNotEnabledForAccount")
		}
		customErr = &nats.APIError{ErrorCode: 1}
		if ok := errors.Is(customErr, nats.ErrJetStreamNotEnabledForAccount); ok {
			t.Fatal("Expected to not match ErrJetStreamNotEnabled")
		}
		var cerr nats.JetStreamError
		if ok := errors.As(customErr, &cerr); !ok {
			t.Fatal("Expected custom error to be a JetStreamError")
		}

		// matching to concrete type via errors.As(...)
		var aerr *nats.APIError
		ok = errors.As(err, &aerr)
		if !ok {
			t.Fatal("Expected an APIError")
		}
		if aerr.ErrorCode != expected {
			t.Fatalf("Expected: %v, got: %v", expected, aerr.ErrorCode)
		}
		expectedMessage = "nats: jetstream not enabled for account"
		if aerr.Error() != expectedMessage {
			t.Fatalf("Expected: %v, got: %v", expectedMessage, apierr.Error())
		}
	})

	t.Run("test non-api error", func(t *testing.T) {
		withJSServer(t, func(t *testing.T, nc *nats.Conn) {
			js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			// stream with empty name
			_, err = js.AddStream(&nats.StreamConfig{})
			if err == nil {
				t.Fatalf("Expected error, got nil")
			}

			// check directly to var (backwards compatible)
			if err != nats.ErrStreamNameRequired {
				t.Fatalf("Expected: %v; got: %v", nats.ErrInvalidStreamName, err)
			}

			// matching via errors.Is
			if ok := errors.Is(err, nats.ErrStreamNameRequired); !ok {
				t.Fatalf("Expected: %v; got: %v", nats.ErrStreamNameRequired, err)
			}

			// matching wrapped via error.Is
			err2 := fmt.Errorf("custom error: %w", nats.ErrStreamNameRequired)
			if ok := errors.Is(err2, nats.ErrStreamNameRequired); !ok {
				t.Fatal("Expected wrapped ErrStreamNameRequired")
			}

			// via classic type assertion.
			jserr, ok := err.(nats.JetStreamError)
			if !ok {
				t.Fatal("Expected a JetStreamError")
			}
			if jserr.APIError() != nil {
				t.Fatalf("Expected: empty APIError; got: %v", jserr.APIError())
			}

			// matching to interface via errors.As(...)
			var jserr2 nats.JetStreamError
			ok = errors.As(err, &jserr2)
			if !ok {
				t.Fatal("Expected a JetStreamError")
			}
			if jserr2.APIError() != nil {
				t.Fatalf("Expected: empty APIError; got: %v", jserr2.APIError())
			}
			expectedMessage := "nats: stream name is required"
			if jserr2.Error() != expectedMessage {
				t.Fatalf("Expected: %v, got: %v", expectedMessage, jserr2.Error())
			}

			// matching to concrete type via errors.As(...)
			var aerr *nats.APIError
			ok = errors.As(err, &aerr)
			if ok {
				t.Fatal("Expected ErrStreamNameRequired not to map to APIError")
			}
		})
	})
}

func TestJetStreamPublish(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Make sure we get a proper failure when no stream is present.
		_, err = js.Publish("foo", []byte("Hello JS"))
		if err != nats.ErrNoStreamResponse {
			t.Fatalf("Expected a no stream error but got %v", err)
		}

		si, err := js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"test", "foo", "bar"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		// Double check that file-based storage is default.
		if si.Config.Storage != nats.FileStorage {
			t.Fatalf("Expected FileStorage as default, got %v", si.Config.Storage)
		}

		_, err = js.StreamInfo("TEST")
		if err != nil {
			t.Fatalf("stream lookup failed: %v", err)
		}

		var pa *nats.PubAck
		expect := func(seq, nmsgs uint64) {
			t.Helper()
			if seq > 0 && pa == nil {
				t.Fatalf("Missing pubAck to test sequence %d", seq)
			}
			if pa != nil {
				if pa.Stream != "TEST" {
					t.Fatalf("Wrong stream name, expected %q, got %q", "TEST", pa.Stream)
				}
				if seq > 0 && pa.Sequence != seq {
					t.Fatalf("Wrong stream sequence, expected %d, got %d", seq, pa.Sequence)
				}
			}

			stream, err := js.StreamInfo("TEST")
			if err != nil {
				t.Fatalf("stream lookup failed: %v", err)
			}
			if stream.State.Msgs != nmsgs {
				t.Fatalf("Expected %d messages, got %d", nmsgs, stream.State.Msgs)
			}
		}

		msg := []byte("Hello JS")

		// Basic publish like NATS core.
		pa, err = js.Publish("foo", msg)
		if err != nil {
			t.Fatalf("Unexpected publish error: %v", err)
		}
		expect(1, 1)

		// Test stream expectation.
		pa, err = js.Publish("foo", msg, nats.ExpectStream("ORDERS"))
		if err == nil || !strings.Contains(err.Error(), "stream does not match") {
			t.Fatalf("Expected an error, got %v", err)
		}
		// Test last sequence expectation.
		pa, err = js.Publish("foo", msg, nats.ExpectLastSequence(10))
		if err == nil || !strings.Contains(err.Error(), "wrong last sequence") {
			t.Fatalf("Expected an error, got %v", err)
		}
		// Messages should have been rejected.
		expect(0, 1)

		// Using PublishMsg API and accessing directly the Header map.
		msg2 := nats.NewMsg("foo")
		msg2.Header[nats.ExpectedLastSeqHdr] = []string{"10"}
		pa, err = js.PublishMsg(msg2)
		if err == nil || !strings.Contains(err.Error(), "wrong last sequence") {
			t.Fatalf("Expected an error, got %v", err)
		}
		expect(0, 1)

		// Send in a stream with a msgId
		pa, err = js.Publish("foo", msg, nats.MsgId("ZZZ"))
		if err != nil {
			t.Fatalf("Unexpected publish error: %v", err)
		}
		expect(2, 2)

		// Send in the same message with same msgId.
		pa, err = js.Publish("foo", msg, nats.MsgId("ZZZ"))
		if err != nil {
			t.Fatalf("Unexpected publish error: %v", err)
		}
		if pa.Sequence != 2 {
			t.Fatalf("Expected sequence of 2, got %d", pa.Sequence)
		}
		if !pa.Duplicate {
			t.Fatalf("Expected duplicate to be set")
		}
		expect(2, 2)

		// Now try to send one in with the wrong last msgId.
		pa, err = js.Publish("foo", msg, nats.ExpectLastMsgId("AAA"))
		if err == nil || !strings.Contains(err.Error(), "wrong last msg") {
			t.Fatalf("Expected an error, got %v", err)
		}
		// Make sure expected sequence works.
		pa, err = js.Publish("foo", msg, nats.ExpectLastSequence(22))
		if err == nil || !strings.Contains(err.Error(), "wrong last sequence") {
			t.Fatalf("Expected an error, got %v", err)
		}
		expect(0, 2)

		// This should work ok.
		pa, err = js.Publish("foo", msg, nats.ExpectLastSequence(2))
		if err != nil {
			t.Fatalf("Unexpected publish error: %v", err)
		}
		expect(3, 3)

		// JetStream Headers are case-sensitive right now,
		// so this will not activate the check.
		msg3 := nats.NewMsg("foo")
		msg3.Header["nats-expected-last-sequence"] = []string{"4"}
		pa, err = js.PublishMsg(msg3)
		if err != nil {
			t.Fatalf("Expected an error, got %v", err)
		}
		expect(4, 4)

		// Now test context and timeouts.
		// Both set should fail.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()

		_, err = js.Publish("foo", msg, nats.AckWait(time.Second), nats.Context(ctx))
		if err != nats.ErrContextAndTimeout {
			t.Fatalf("Expected %q, got %q", nats.ErrContextAndTimeout, err)
		}

		// Create dummy listener for timeout and context tests.
		sub, err := nc.SubscribeSync("baz")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		_, err = js.Publish("baz", msg, nats.AckWait(time.Nanosecond))
		if err != nats.ErrTimeout {
			t.Fatalf("Expected %q, got %q", nats.ErrTimeout, err)
		}

		go cancel()
		_, err = js.Publish("baz", msg, nats.Context(ctx))
		if err != context.Canceled {
			t.Fatalf("Expected %q, got %q", context.Canceled, err)
		}

		// Test ExpectLastSequencePerSubject. Just make sure that we set the header.
		sub, err = nc.SubscribeSync("test")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		js.Publish("test", []byte("msg"), nats.ExpectLastSequencePerSubject(1))
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Error on next msg: %v", err)
		}
		if m.Header.Get(nats.ExpectedLastSubjSeqHdr) != "1" {
			t.Fatalf("Header ExpectLastSequencePerSubject not set: %+v", m.Header)
		}
	})
}

func TestPublishWithTTL(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name: "foo", Subjects: []string{"FOO.*"}, MaxMsgSize: 64, AllowMsgTTL: true})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		ack, err := js.Publish("FOO.1", []byte("msg"), nats.MsgTTL(1*time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		gotMsg, err := js.GetMsg("foo", ack.Sequence)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ttl := gotMsg.Header.Get("Nats-TTL"); ttl != "1s" {
			t.Fatalf("Expected message to have TTL header set to 1s; got: %s", ttl)
		}
		time.Sleep(1500 * time.Millisecond)
		_, err = js.GetMsg("foo", ack.Sequence)
		if !errors.Is(err, nats.ErrMsgNotFound) {
			t.Fatalf("Expected not found error; got: %v", err)
		}
	})
}

func TestMsgDeleteMarkerMaxAge(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name: "foo", Subjects: []string{"FOO.*"}, AllowMsgTTL: true, SubjectDeleteMarkerTTL: 50 * time.Second, MaxAge: 1 * time.Second})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.Publish("FOO.1", []byte("msg1"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		time.Sleep(1500 * time.Millisecond)
		gotMsg, err := js.GetLastMsg("foo", "FOO.1")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ttlMarker := gotMsg.Header.Get("Nats-Marker-Reason"); ttlMarker != "MaxAge" {
			t.Fatalf("Expected message to have Marker-Reason header set to MaxAge; got: %s", ttlMarker)
		}
		if ttl := gotMsg.Header.Get("Nats-TTL"); ttl != "50s" {
			t.Fatalf("Expected message to have Nats-TTL header set to 50s; got: %s", ttl)
		}
	})
}

func TestPublishAsyncWithTTL(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name: "foo", Subjects: []string{"FOO.*"}, MaxMsgSize: 64, AllowMsgTTL: true})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		paf, err := js.PublishAsync("FOO.1", []byte("msg"), nats.MsgTTL(1*time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		var ack *nats.PubAck
		select {
		case ack = <-paf.Ok():
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive ack")
		}

		gotMsg, err := js.GetMsg("foo", ack.Sequence)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ttl := gotMsg.Header.Get("Nats-TTL"); ttl != "1s" {
			t.Fatalf("Expected message to have TTL header set to 1s; got: %s", ttl)
		}
		time.Sleep(1500 * time.Millisecond)
		_, err = js.GetMsg("foo", ack.Sequence)
		if !errors.Is(err, nats.ErrMsgNotFound) {
			t.Fatalf("Expected not found error; got: %v", err)
		}
	})
}

func TestJetStreamSubscribe(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, nc *nats.Conn, inst *testservice.Instance) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		expectConsumers := func(t *testing.T, expected int) {
			t.Helper()
			checkFor(t, 2*time.Second, 15*time.Millisecond, func() error {
				var infos []*nats.ConsumerInfo
				for info := range js.Consumers("TEST") {
					infos = append(infos, info)
				}
				if len(infos) != expected {
					return fmt.Errorf("Expected %d consumers, got: %d", expected, len(infos))
				}
				return nil
			})
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo", "bar", "baz", "foo.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.StreamInfo("TEST")
		if err != nil {
			t.Fatalf("stream lookup failed: %v", err)
		}

		// If stream name is not specified, then the subject is required.
		if _, err := js.SubscribeSync(""); err == nil || !strings.Contains(err.Error(), "required") {
			t.Fatalf("Unexpected error: %v", err)
		}
		// Check that if stream name is present, then technically the subject does not have to.
		sub, err := js.SubscribeSync("", nats.BindStream("TEST"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		initialPending, err := sub.InitialConsumerPending()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if initialPending != 0 {
			t.Fatalf("Expected no initial pending, got %d", initialPending)
		}
		sub.Unsubscribe()

		// Check that Queue subscribe with HB or FC fails.
		_, err = js.QueueSubscribeSync("foo", "wq", nats.IdleHeartbeat(time.Second))
		if err == nil || !strings.Contains(err.Error(), "heartbeat") {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.QueueSubscribeSync("foo", "wq", nats.EnableFlowControl())
		if err == nil || !strings.Contains(err.Error(), "flow control") {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Check that Queue subscribe without durable name requires queue name
		// to not have "." in the name.
		_, err = js.QueueSubscribeSync("foo", "bar.baz")
		if err != nats.ErrInvalidConsumerName {
			t.Fatalf("Unexpected error: %v", err)
		}

		msg := []byte("Hello JS")

		js.Publish("foo", msg)

		q := make(chan *nats.Msg, 4)

		checkSub, err := nc.SubscribeSync("ivan")
		if err != nil {
			t.Fatalf("Error on sub: %v", err)
		}

		// Now create a simple ephemeral consumer.
		sub1, err := js.Subscribe("foo", func(m *nats.Msg) {
			q <- m
		}, nats.DeliverSubject("ivan"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub1.Unsubscribe()

		select {
		case m := <-q:
			if _, err := m.Metadata(); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if _, err := checkSub.NextMsg(time.Second); err != nil {
				t.Fatal("Wrong deliver subject")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive the messages in time")
		}

		sub2, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub2.Unsubscribe()

		waitForPending := func(t *testing.T, sub *nats.Subscription, n int) {
			t.Helper()
			timeout := time.Now().Add(2 * time.Second)
			for time.Now().Before(timeout) {
				if msgs, _, _ := sub.Pending(); msgs == n {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			msgs, _, _ := sub.Pending()
			t.Fatalf("Expected to receive %d messages, but got %d", n, msgs)
		}

		waitForPending(t, sub2, 1)

		toSend := 10
		for range toSend {
			js.Publish("bar", msg)
		}

		done := make(chan bool, 1)
		var received int
		sub3, err := js.Subscribe("bar", func(m *nats.Msg) {
			received++
			if received == toSend {
				done <- true
			}
		})

		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		expectConsumers(t, 3)
		defer sub3.Unsubscribe()

		initialPending, err = sub3.InitialConsumerPending()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if initialPending != 10 {
			t.Fatalf("Expected initial pending of 10, got %d", initialPending)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive all of the messages in time")
		}

		// If we are here we have received all of the messages.
		// We hang the ConsumerInfo option off of the subscription, so we use that to check status.
		// We may need to retry this check since the acks sent by the client have to be processed
		// on the server.
		checkFor(t, 10*time.Second, 100*time.Millisecond, func() error {
			info, _ := sub3.ConsumerInfo()
			if info.Config.AckPolicy != nats.AckExplicitPolicy {
				t.Fatalf("Expected ack explicit policy, got %q", info.Config.AckPolicy)
			}
			if info.Delivered.Consumer != uint64(toSend) {
				return fmt.Errorf("Expected to have received all %d messages, got %d", toSend, info.Delivered.Consumer)
			}
			if info.AckFloor.Consumer != uint64(toSend) {
				return fmt.Errorf("Expected to have ack'd all %d messages, got ack floor of %d", toSend, info.AckFloor.Consumer)
			}
			return nil
		})
		sub3.Unsubscribe()
		sub2.Unsubscribe()
		sub1.Unsubscribe()
		expectConsumers(t, 0)

		// durable
		dname := "derek"
		sub, err = js.SubscribeSync("foo", nats.Durable(dname))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		expectConsumers(t, 1)

		info, _ := sub.ConsumerInfo()
		if info.Config.Durable != dname {
			t.Fatalf("Expected durable name to be set to %q, got %q", dname, info.Config.Durable)
		}
		deliver := info.Config.DeliverSubject

		// Drain subscription, this will delete the consumer.
		go func() {
			time.Sleep(250 * time.Millisecond)
			for {
				if _, err := sub.NextMsg(500 * time.Millisecond); err != nil {
					return
				}
			}
		}()
		sub.Drain()
		nc.Flush()
		expectConsumers(t, 0)

		sub, err = js.SubscribeSync("foo", nats.Durable(dname))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if info, err := sub.ConsumerInfo(); err != nil || info.Config.DeliverSubject == deliver {
			t.Fatal("Expected delivery subject to be different")
		}
		expectConsumers(t, 1)

		// Subscribing again with same subject and durable name is an error.
		if _, err := js.SubscribeSync("foo", nats.Durable(dname)); err == nil {
			t.Fatal("Unexpected success")
		}
		expectConsumers(t, 1)

		sub.Unsubscribe()
		expectConsumers(t, 0)

		sub, err = js.SubscribeSync("foo", nats.Durable(dname))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		expectConsumers(t, 1)

		if deliver == sub.Subject {
			t.Fatalf("Expected delivery subject to be different then %q", deliver)
		}
		sub.Unsubscribe()
		expectConsumers(t, 0)

		// queue group on bar (durable=queue name)
		sub1, err = js.QueueSubscribeSync("bar", "v0")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub1.Unsubscribe()
		waitForPending(t, sub1, 10)
		expectConsumers(t, 1)

		if _, err = js.QueueSubscribeSync("baz", "v0"); err == nil {
			t.Fatal("Unexpected success")
		}

		if _, err = js.QueueSubscribeSync("bar", "v1", nats.Durable("v0")); err == nil {
			t.Fatal("Unexpected success")
		}
		sub2, err = js.QueueSubscribeSync("bar", "v0", nats.Durable("otherQueueDurable"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub2.Unsubscribe()
		waitForPending(t, sub2, 10)
		expectConsumers(t, 2)

		sub1.Unsubscribe()
		sub2.Unsubscribe()
		expectConsumers(t, 0)

		// Now try pull based subscribers.
		if _, err := js.Subscribe("bar", nil); err != nats.ErrBadSubscription {
			t.Fatalf("Expected an error trying to create subscriber with nil callback, got %v", err)
		}

		// Since v2.7.0, we can create pull consumers with ephemerals.
		sub, err = js.PullSubscribe("bar", "")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		sub.Unsubscribe()

		// Pull consumer with AckNone policy
		sub, err = js.PullSubscribe("bar", "", nats.AckNone())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		sub.Unsubscribe()

		// Can't specify DeliverSubject for pull subscribers
		_, err = js.PullSubscribe("bar", "foo", nats.DeliverSubject("baz"))
		if err != nats.ErrPullSubscribeToPushConsumer {
			t.Fatalf("Unexpected error: %v", err)
		}
		// If stream name is not specified, need the subject.
		_, err = js.PullSubscribe("", "rip")
		if err == nil || !strings.Contains(err.Error(), "required") {
			t.Fatalf("Unexpected error: %v", err)
		}
		// If stream provided, it should be ok.
		sub, err = js.PullSubscribe("", "rip", nats.BindStream("TEST"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		sub.Unsubscribe()

		batch := 5
		sub, err = js.PullSubscribe("bar", "rip")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		expectConsumers(t, 1)

		bmsgs, err := sub.Fetch(batch)
		if err != nil {
			t.Fatal(err)
		}

		if info, _ := sub.ConsumerInfo(); info.NumAckPending != batch || info.NumPending != uint64(batch) {
			t.Fatalf("Expected %d pending ack, and %d still waiting to be delivered, got %d and %d", batch, batch, info.NumAckPending, info.NumPending)
		}

		// Now go ahead and consume these and ack, but not ack+next.
		for i := range batch {
			m := bmsgs[i]
			err = m.AckSync()
			if err != nil {
				t.Fatal(err)
			}
		}
		checkFor(t, time.Second, 15*time.Millisecond, func() error {
			if info, _ := sub.ConsumerInfo(); info.AckFloor.Consumer != uint64(batch) {
				return fmt.Errorf("Expected ack floor to be %d, got %d", batch, info.AckFloor.Consumer)
			}
			return nil
		})
		waitForPending(t, sub, 0)

		bmsgs, err = sub.Fetch(10, nats.MaxWait(2*time.Second))
		if err != nil {
			t.Errorf("Unexpected error: %v", err)
		}
		got := len(bmsgs)
		expected := 5
		if got != expected {
			t.Errorf("Expected: %v, got: %v", expected, got)
		}

		for _, msg := range bmsgs {
			msg.AckSync()
		}

		_, err = js.PullSubscribe("baz", "rip")
		if err != nats.ErrSubjectMismatch {
			t.Fatalf("Expected a %q error but got %q", nats.ErrSubjectMismatch, err)
		}

		for range toSend {
			js.Publish("bar", msg)
		}

		sub, err = js.PullSubscribe("bar", "rip")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		expectConsumers(t, 1)

		expected = 5
		bmsgs, err = sub.Fetch(expected, nats.MaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}

		got = len(bmsgs)
		if got != expected {
			t.Errorf("Expected: %v, got: %v", expected, got)
		}

		info, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if info.NumAckPending != batch || info.NumPending != uint64(toSend-batch) {
			t.Fatalf("Expected ack pending of %d and pending to be %d, got %d %d", batch, toSend-batch, info.NumAckPending, info.NumPending)
		}

		// Pull subscriptions can't use NextMsg variants.
		if _, err := sub.NextMsg(time.Second); err != nats.ErrTypeSubscription {
			t.Fatalf("Expected error %q, got %v", nats.ErrTypeSubscription, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := sub.NextMsgWithContext(ctx); err != nats.ErrTypeSubscription {
			t.Fatalf("Expected error %q, got %v", nats.ErrTypeSubscription, err)
		}
		cancel()

		if _, err := js.SubscribeSync("baz", nats.Durable("test.durable")); err != nats.ErrInvalidConsumerName {
			t.Fatalf("Expected invalid durable name error")
		}

		ackWait := 1 * time.Millisecond
		sub, err = js.SubscribeSync("bar", nats.Durable("ack-wait"), nats.AckWait(ackWait))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		expectConsumers(t, 2)

		_, err = sub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		info, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if info.Config.AckWait != ackWait {
			t.Errorf("Expected %v, got %v", ackWait, info.Config.AckWait)
		}

		sub, err = js.SubscribeSync("bar", nats.Durable("consumer-name"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		expectConsumers(t, 3)
		m, err := sub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if meta.Stream != "TEST" {
			t.Fatalf("Unexpected stream name, got: %v", meta.Stream)
		}
		if meta.Consumer != "consumer-name" {
			t.Fatalf("Unexpected consumer name, got: %v", meta.Consumer)
		}

		qsubDurable := nats.Durable("qdur-chan")
		mch := make(chan *nats.Msg, 16536)
		sub, err = js.ChanQueueSubscribe("bar", "v1", mch, qsubDurable)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		expectConsumers(t, 4)

		var a, b *nats.MsgMetadata
		select {
		case msg := <-mch:
			meta, err := msg.Metadata()
			if err != nil {
				t.Error(err)
			}
			a = meta
		case <-time.After(2 * time.Second):
			t.Errorf("Timeout waiting for message")
		}

		mch2 := make(chan *nats.Msg, 16536)
		sub, err = js.ChanQueueSubscribe("bar", "v1", mch2, qsubDurable)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		expectConsumers(t, 4)

		for range toSend {
			js.Publish("bar", msg)
		}

		select {
		case msg := <-mch2:
			meta, err := msg.Metadata()
			if err != nil {
				t.Error(err)
			}
			b = meta
		case <-time.After(2 * time.Second):
			t.Errorf("Timeout waiting for message")
		}
		if reflect.DeepEqual(a, b) {
			t.Errorf("Expected to receive different messages in stream")
		}

		expectConsumers(t, 4)

		sub, err = js.SubscribeSync("foo", nats.InactiveThreshold(-100*time.Millisecond))
		if err == nil || !strings.Contains(err.Error(), "invalid InactiveThreshold") {
			t.Fatalf("Expected error about invalid option, got %v", err)
		}

		sub, err = js.SubscribeSync("foo", nats.InactiveThreshold(50*time.Millisecond))
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		ci, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Error on consumer info: %v", err)
		}
		name := ci.Name
		nc.Close()

		time.Sleep(150 * time.Millisecond)

		nc2 := dialInstance(t, inst)
		defer nc2.Close()
		js2, err := nc2.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if ci, err := js2.ConsumerInfo("TEST", name); err == nil {
			t.Fatalf("Expected no consumer to exist, got %+v", ci)
		}
	})
}

func TestJetStreamSubscribe_SkipConsumerLookup(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddConsumer("TEST", &nats.ConsumerConfig{
			Name:           "cons",
			DeliverSubject: "_INBOX.foo",
			AckPolicy:      nats.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// for checking whether subscribe looks up the consumer
		infoSub, err := nc.SubscribeSync("$JS.API.CONSUMER.INFO.TEST.*")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer infoSub.Unsubscribe()

		// for checking whether subscribe creates the consumer
		createConsSub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.>")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer createConsSub.Unsubscribe()
		t.Run("use Bind to skip consumer lookup and create", func(t *testing.T) {
			sub, err := js.SubscribeSync("", nats.Bind("TEST", "cons"), nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			if msg, err := infoSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer lookup; got message on %q", msg.Subject)
			}

			if msg, err := createConsSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer create; got message on %q", msg.Subject)
			}
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
				t.Fatalf("Expected to receive msg; got: %s", err)
			}
		})
		t.Run("use Durable, skip consumer lookup but overwrite the consumer", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo", nats.Durable("cons"), nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if msg, err := infoSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer lookup; got message on %q", msg.Subject)
			}

			if _, err := createConsSub.NextMsg(50 * time.Millisecond); err != nil {
				t.Fatalf("Expected consumer create; got: %s", err)
			}
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
				t.Fatalf("Expected to receive msg; got: %s", err)
			}
		})
		t.Run("create new consumer with Durable, skip lookup", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo", nats.Durable("pp"), nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo1"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			if msg, err := infoSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer lookup; got message on %q", msg.Subject)
			}

			if _, err := createConsSub.NextMsg(50 * time.Millisecond); err != nil {
				t.Fatalf("Expected consumer create; got: %s", err)
			}
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
				t.Fatalf("Expected to receive msg; got: %s", err)
			}
		})
		t.Run("create new consumer with ConsumerName, skip lookup", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo", nats.ConsumerName("pp"), nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo1"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			if msg, err := infoSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer lookup; got message on %q", msg.Subject)
			}

			if _, err := createConsSub.NextMsg(50 * time.Millisecond); err != nil {
				t.Fatalf("Expected consumer create; got: %s", err)
			}
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
				t.Fatalf("Expected to receive msg; got: %s", err)
			}
		})

		t.Run("create ephemeral consumer, SkipConsumerLookup has no effect", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo", nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo2"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			if msg, err := infoSub.NextMsg(50 * time.Millisecond); err == nil {
				t.Fatalf("Expected to skip consumer lookup; got message on %q", msg.Subject)
			}

			if _, err := createConsSub.NextMsg(50 * time.Millisecond); err != nil {
				t.Fatalf("Expected consumer create; got: %s", err)
			}
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
				t.Fatalf("Expected to receive msg; got: %s", err)
			}
		})
		t.Run("attempt to update ack policy of existing consumer", func(t *testing.T) {
			_, err := js.SubscribeSync("foo", nats.Durable("cons"), nats.SkipConsumerLookup(), nats.DeliverSubject("_INBOX.foo"), nats.AckAll())
			if err == nil || !strings.Contains(err.Error(), "ack policy can not be updated") {
				t.Fatalf("Expected update consumer error, got: %v", err)
			}
		})
	})
}

func TestPullSubscribeFetchWithHeartbeat(t *testing.T) {
	t.Skip("Since v2.10.26 server sends no responders if the consumer is deleted, we need to figure out how else to test missing heartbeats")
}

func TestPullSubscribeConsumerDoesNotExist(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := js.PullSubscribe("foo", "")
		if err != nil {
			t.Fatalf("Unexpected error: %s", err)
		}
		defer sub.Unsubscribe()

		info, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if err := js.DeleteConsumer("TEST", info.Name); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = sub.Fetch(5)
		if !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("Expected no responders error; got: %v", err)
		}

		msgs, err := sub.FetchBatch(5)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		select {
		case _, ok := <-msgs.Messages():
			if ok {
				t.Fatalf("Expected no messages")
			}
		case <-time.After(time.Second):
			t.Fatalf("Timeout waiting for messages")
		}

		if !errors.Is(msgs.Error(), nats.ErrNoResponders) {
			t.Fatalf("Expected no responders error; got: %v", msgs.Error())
		}
	})
}

func TestPullSubscribeFetchDrain(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		defer js.PurgeStream("TEST")
		sub, err := js.PullSubscribe("foo", "")
		if err != nil {
			t.Fatalf("Unexpected error: %s", err)
		}
		for range 100 {
			if _, err := js.Publish("foo", []byte("msg")); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
		}
		// fill buffer with messages
		cinfo, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %s", err)
		}
		nextSubject := fmt.Sprintf("$JS.API.CONSUMER.MSG.NEXT.TEST.%s", cinfo.Name)
		replySubject := strings.Replace(sub.Subject, "*", "abc", 1)
		payload := `{"batch":10,"no_wait":true}`
		if err := nc.PublishRequest(nextSubject, replySubject, []byte(payload)); err != nil {
			t.Fatalf("Unexpected error: %s", err)
		}
		time.Sleep(100 * time.Millisecond)

		sub.Drain()
		msgs, err := sub.Fetch(100)
		if err != nil {
			t.Fatalf("Unexpected error: %s", err)
		}
		for _, msg := range msgs {
			msg.Ack()
		}
		if len(msgs) != 10 {
			t.Fatalf("Expected %d messages; got: %d", 10, len(msgs))
		}

		_, err = sub.Fetch(10, nats.MaxWait(100*time.Millisecond))
		if !errors.Is(err, nats.ErrSubscriptionClosed) {
			t.Fatalf("Expected error: %s; got: %s", nats.ErrSubscriptionClosed, err)
		}
	})
}

func TestPullSubscribeFetchBatchWithHeartbeat(t *testing.T) {
	t.Skip("Since v2.10.26 server sends no responders if the consumer is deleted, we need to figure out how else to test missing heartbeats")
}

func TestPullSubscribeFetchBatch(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		t.Run("basic fetch", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			res, err := sub.FetchBatch(10)
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			go func() {
				time.Sleep(10 * time.Millisecond)
				for range 5 {
					js.Publish("foo", []byte("msg"))
				}
			}()
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 10 {
				t.Fatalf("Expected %d messages; got: %d", 10, len(msgs))
			}
		})

		t.Run("multiple concurrent fetches", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 50 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			var r1, r2, r3 nats.MessageBatch
			started := &sync.WaitGroup{}
			started.Add(3)
			errs := make(chan error, 3)
			go func() {
				var err error
				r1, err = sub.FetchBatch(10)
				if err != nil {
					errs <- err
				}
				started.Done()
			}()
			go func() {
				var err error
				r2, err = sub.FetchBatch(10)
				if err != nil {
					errs <- err
				}
				started.Done()
			}()
			go func() {
				var err error
				r3, err = sub.FetchBatch(10)
				if err != nil {
					errs <- err
				}
				started.Done()
			}()
			started.Wait()

			select {
			case err := <-errs:
				t.Fatalf("Error initializing fetch: %s", err)
			default:
			}

			var msgsReceived int
			for msgsReceived < 30 {
				select {
				case <-r1.Messages():
					msgsReceived++
				case <-r2.Messages():
					msgsReceived++
				case <-r3.Messages():
					msgsReceived++
				case <-time.After(1 * time.Second):
					t.Fatalf("Timeout waiting for incoming messages")
				}
			}
			select {
			case <-r1.Done():
			case <-time.After(1 * time.Second):
				t.Fatalf("FetchBatch result channel should be closed after receiving all messages on r1")
			}
			select {
			case <-r2.Done():
			case <-time.After(1 * time.Second):
				t.Fatalf("FetchBatch result channel should be closed after receiving all messages on r2")
			}
			select {
			case <-r3.Done():
			case <-time.After(1 * time.Second):
				t.Fatalf("FetchBatch result channel should be closed after receiving all messages on r3")
			}
			if r1.Error() != nil {
				t.Fatalf("Unexpected error: %s", r1.Error())
			}
			if r2.Error() != nil {
				t.Fatalf("Unexpected error: %s", r2.Error())
			}
			if r3.Error() != nil {
				t.Fatalf("Unexpected error: %s", r3.Error())
			}
			if msgsReceived != 30 {
				t.Fatalf("Expected %d messages; got: %d", 30, msgsReceived)
			}
		})

		t.Run("deliver all, then consume", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			res, err := sub.FetchBatch(5)
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			time.Sleep(10 * time.Millisecond)
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 5, len(msgs))
			}
		})

		t.Run("fetch with context", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
			defer cancel()
			res, err := sub.FetchBatch(10, nats.Context(ctx))
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			go func() {
				time.Sleep(10 * time.Millisecond)
				for range 5 {
					js.Publish("foo", []byte("msg"))
				}
			}()
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 10 {
				t.Fatalf("Expected %d messages; got: %d", 10, len(msgs))
			}
		})

		t.Run("fetch subset of messages", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 10 {
				js.Publish("foo", []byte("msg"))
			}
			res, err := sub.FetchBatch(5)
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 10, len(msgs))
			}
		})

		t.Run("context timeout, no error", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			// 500ms so the 5 in-flight messages have headroom while the
			// deadline still fires before any nonexistent 6th message.
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			res, err := sub.FetchBatch(10, nats.Context(ctx))
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 5, len(msgs))
			}
		})

		t.Run("request expired", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			// The batch is under-filled (5 of 10 requested exist), so the
			// request always runs the wait out; 500ms leaves room to deliver
			// the 5 with the server a container hop away.
			res, err := sub.FetchBatch(10, nats.MaxWait(500*time.Millisecond))
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 5, len(msgs))
			}
		})

		t.Run("cancel context during fetch", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
			res, err := sub.FetchBatch(10, nats.Context(ctx))
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			go func() {
				time.Sleep(200 * time.Millisecond)
				cancel()
			}()
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() == nil || !errors.Is(res.Error(), context.Canceled) {
				t.Fatalf("Expected error: %s; got: %s", nats.ErrConsumerDeleted, res.Error())
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 5, len(msgs))
			}
		})

		t.Run("remove durable consumer during fetch", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "cons")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 5 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			res, err := sub.FetchBatch(10)
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			go func() {
				time.Sleep(10 * time.Millisecond)
				js.DeleteConsumer("TEST", "cons")
			}()
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
			}
			if res.Error() == nil || !errors.Is(res.Error(), nats.ErrConsumerDeleted) {
				t.Fatalf("Expected error: %s; got: %s", nats.ErrConsumerDeleted, err)
			}
			if len(msgs) != 5 {
				t.Fatalf("Expected %d messages; got: %d", 5, len(msgs))
			}
		})

		t.Run("validation errors", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			_, err = sub.FetchBatch(-1)
			if !errors.Is(err, nats.ErrInvalidArg) {
				t.Errorf("Expected error: %s; got: %s", nats.ErrInvalidArg, err)
			}

			syncSub, err := js.SubscribeSync("foo")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			_, err = syncSub.FetchBatch(10)
			if !errors.Is(err, nats.ErrTypeSubscription) {
				t.Errorf("Expected error: %s; got: %s", nats.ErrTypeSubscription, err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
			defer cancel()
			_, err = sub.FetchBatch(10, nats.Context(ctx), nats.MaxWait(2*time.Second))
			if !errors.Is(err, nats.ErrContextAndTimeout) {
				t.Errorf("Expected error: %s; got: %s", nats.ErrContextAndTimeout, err)
			}

			_, err = sub.FetchBatch(10, nats.Context(context.Background()))
			if !errors.Is(err, nats.ErrNoDeadlineContext) {
				t.Errorf("Expected error: %s; got: %s", nats.ErrNoDeadlineContext, err)
			}
		})

		t.Run("close subscription", func(t *testing.T) {
			defer js.PurgeStream("TEST")
			sub, err := js.PullSubscribe("foo", "")
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			for range 100 {
				if _, err := js.Publish("foo", []byte("msg")); err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
			}
			cinfo, err := sub.ConsumerInfo()
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			nextSubject := fmt.Sprintf("$JS.API.CONSUMER.MSG.NEXT.TEST.%s", cinfo.Name)
			replySubject := strings.Replace(sub.Subject, "*", "abc", 1)
			payload := `{"batch":10,"no_wait":true}`
			if err := nc.PublishRequest(nextSubject, replySubject, []byte(payload)); err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			time.Sleep(100 * time.Millisecond)

			sub.Drain()
			res, err := sub.FetchBatch(100)
			if err != nil {
				t.Fatalf("Unexpected error: %s", err)
			}
			msgs := make([]*nats.Msg, 0)
			for msg := range res.Messages() {
				msgs = append(msgs, msg)
				msg.Ack()
			}
			if res.Error() != nil {
				t.Fatalf("Unexpected error: %s", res.Error())
			}
			if len(msgs) != 10 {
				t.Fatalf("Expected %d messages; got: %d", 10, len(msgs))
			}

			_, err = sub.FetchBatch(10, nats.MaxWait(100*time.Millisecond))
			if !errors.Is(err, nats.ErrSubscriptionClosed) {
				t.Fatalf("Expected error: %s; got: %s", nats.ErrSubscriptionClosed, err)
			}
		})
	})
}

func TestPullSubscribeConsumerDeleted(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if _, err := js.Publish("foo", []byte("msg")); err != nil {
			t.Fatal(err)
		}
		t.Run("delete consumer", func(t *testing.T) {
			sub, err := js.PullSubscribe("foo", "cons")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()

			if _, err = sub.Fetch(1, nats.MaxWait(10*time.Millisecond)); err != nil {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrTimeout, err)
			}
			time.AfterFunc(50*time.Millisecond, func() { js.DeleteConsumer("TEST", "cons") })
			if _, err = sub.Fetch(1, nats.MaxWait(100*time.Millisecond)); !errors.Is(err, nats.ErrConsumerDeleted) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrConsumerDeleted, err)
			}
		})

		t.Run("delete stream", func(t *testing.T) {
			sub, err := js.PullSubscribe("foo", "cons")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()

			if _, err = sub.Fetch(1, nats.MaxWait(10*time.Millisecond)); err != nil {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrTimeout, err)
			}
			time.AfterFunc(50*time.Millisecond, func() { js.DeleteStream("TEST") })
			if _, err = sub.Fetch(1, nats.MaxWait(100*time.Millisecond)); !errors.Is(err, nats.ErrConsumerDeleted) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrConsumerDeleted, err)
			}
		})
	})
}

func TestJetStreamAckPending_Pull(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		const totalMsgs = 4
		for i := range totalMsgs {
			if _, err := js.Publish("foo", []byte(fmt.Sprintf("msg %d", i))); err != nil {
				t.Fatal(err)
			}
		}

		ackPendingLimit := 3
		sub, err := js.PullSubscribe("foo", "dname-pull-ack-wait", nats.MaxAckPending(ackPendingLimit))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		var msgs []*nats.Msg
		for range ackPendingLimit {
			ms, err := sub.Fetch(1)
			if err != nil {
				t.Fatalf("Error on fetch: %v", err)
			}
			msgs = append(msgs, ms...)
		}

		if _, err := sub.Fetch(1, nats.MaxWait(250*time.Millisecond)); err != nats.ErrTimeout {
			t.Fatalf("Expected timeout, got: %v", err)
		}
		msgs[0].Ack()
		if _, err := sub.Fetch(1); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
	})
}

func TestJetStreamAckPending_Push(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		const totalMsgs = 3
		for i := range totalMsgs {
			if _, err := js.Publish("foo", []byte(fmt.Sprintf("msg %d", i))); err != nil {
				t.Fatal(err)
			}
		}

		sub, err := js.SubscribeSync("foo",
			nats.Durable("dname-wait"),
			nats.AckWait(100*time.Millisecond),
			nats.MaxDeliver(5),
			nats.MaxAckPending(3),
		)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		// 3 messages delivered 5 times.
		expected := 15
		timeout := time.Now().Add(2 * time.Second)
		pending := 0
		for time.Now().Before(timeout) {
			if pending, _, _ = sub.Pending(); pending >= expected {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pending < expected {
			t.Errorf("Expected %v, got %v", expected, pending)
		}

		info, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}

		got := info.NumRedelivered
		expected = 3
		if got < expected {
			t.Errorf("Expected %v, got: %v", expected, got)
		}

		got = info.NumAckPending
		expected = 3
		if got < expected {
			t.Errorf("Expected %v, got: %v", expected, got)
		}

		got = info.NumWaiting
		expected = 0
		if got != expected {
			t.Errorf("Expected %v, got: %v", expected, got)
		}

		got = int(info.NumPending)
		expected = 0
		if got != expected {
			t.Errorf("Expected %v, got: %v", expected, got)
		}

		got = info.Config.MaxAckPending
		expected = 3
		if got != expected {
			t.Errorf("Expected %v, got %v", expected, pending)
		}

		got = info.Config.MaxDeliver
		expected = 5
		if got != expected {
			t.Errorf("Expected %v, got %v", expected, pending)
		}

		acks := map[int]int{}

		ackPending := 3
		timeout = time.Now().Add(2 * time.Second)
		for time.Now().Before(timeout) {
			info, err := sub.ConsumerInfo()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := info.NumAckPending, ackPending; got > 0 && got != want {
				t.Fatalf("unexpected num ack pending: got=%d, want=%d", got, want)
			}

			pending, _, _ = sub.Pending()
			if pending == 0 {
				break
			}

			m, err := sub.NextMsg(100 * time.Millisecond)
			if err != nil {
				t.Fatalf("Error getting next message: %v", err)
			}

			if err := m.AckSync(); err != nil {
				t.Fatalf("Error on ack message: %v", err)
			}

			meta, err := m.Metadata()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			acks[int(meta.Sequence.Stream)]++

			if ackPending != 0 {
				ackPending--
			}
			if int(meta.NumPending) != ackPending {
				t.Errorf("Expected %v, got %v", ackPending, meta.NumPending)
			}
		}

		got = len(acks)
		expected = 3
		if got != expected {
			t.Errorf("Expected %v, got %v", expected, got)
		}

		expected = 5
		for _, got := range acks {
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
		}

		_, err = sub.NextMsg(100 * time.Millisecond)
		if err != nats.ErrTimeout {
			t.Errorf("Expected timeout, got: %v", err)
		}
	})
}

func TestJetStream_Drain(t *testing.T) {
	c := newTester(t)
	inst := c.CreateServer(t, true)
	t.Cleanup(func() { inst.Destroy(t) })

	ctx, done := context.WithTimeout(context.Background(), 10*time.Second)

	nc, err := nats.Connect(inst.Servers[0].URL, nats.MaxReconnects(-1), nats.ClosedHandler(func(_ *nats.Conn) {
		done()
	}))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	defer nc.Close()
	c.WaitForJetStream(t, nc)

	js, err := nc.JetStream(nats.MaxWait(250 * time.Millisecond))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	_, err = js.AddStream(&nats.StreamConfig{
		Name:     "TEST",
		Subjects: []string{"drain"},
	})
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	total := 500
	for i := range total {
		_, err := js.Publish("drain", []byte(fmt.Sprintf("i:%d", i)))
		if err != nil {
			t.Error(err)
		}
	}

	errCh := make(chan error, 2048)
	createSub := func(name string) (*nats.Subscription, error) {
		return js.Subscribe("drain", func(m *nats.Msg) {
			err := m.AckSync()
			if err != nil {
				errCh <- err
			}
		}, nats.Durable(name), nats.ManualAck())
	}

	subA, err := createSub("A")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	subB, err := createSub("B")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	subC, err := createSub("C")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	subD, err := createSub("D")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	waitForDelivered := func(t *testing.T, sub *nats.Subscription) {
		t.Helper()
		timeout := time.Now().Add(2 * time.Second)
		for time.Now().Before(timeout) {
			if msgs, _ := sub.Delivered(); msgs != 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitForDelivered(t, subA)
	waitForDelivered(t, subB)
	waitForDelivered(t, subC)
	waitForDelivered(t, subD)
	nc.Drain()

	select {
	case err := <-errCh:
		t.Fatalf("Error during drain: %+v", err)
	case <-ctx.Done():
		// OK!
	}
}

func TestAckForNonJetStream(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		sub, _ := nc.SubscribeSync("foo")
		nc.PublishRequest("foo", "_INBOX_", []byte("OK"))
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if err := m.Ack(); err != nil {
			t.Fatalf("Expected no errors, got '%v'", err)
		}
	})
}

func TestJetStreamManagement(t *testing.T) {
	c := newTester(t)
	accounts := `accounts: {
  A {
    users: [{ user: "foo" }]
    jetstream: { max_mem: 64MB, max_file: 64MB }
  }
}`
	inst := c.CreateServer(t, true,
		testservice.WithAccounts(accounts),
		testservice.WithAuthorization("# auth required, no no_auth_user"),
		testservice.WithSystemAccount(noSystemAccountBody()),
	)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst, nats.UserInfo("foo", ""))
	c.WaitForJetStream(t, nc)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	var si *nats.StreamInfo

	t.Run("create stream", func(t *testing.T) {
		consLimits := nats.StreamConsumerLimits{
			MaxAckPending:     100,
			InactiveThreshold: 10 * time.Second,
		}
		cfg := &nats.StreamConfig{
			Name:        "foo",
			Subjects:    []string{"foo", "bar", "baz"},
			Compression: nats.S2Compression,
			ConsumerLimits: nats.StreamConsumerLimits{
				MaxAckPending:     100,
				InactiveThreshold: 10 * time.Second,
			},
			FirstSeq: 22,
			Metadata: map[string]string{
				"foo": "bar",
				"baz": "quux",
			},
		}

		si, err := js.AddStream(cfg)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si == nil || si.Config.Name != "foo" {
			t.Fatalf("StreamInfo is not correct %+v", si)
		}
		if v1, v2 := si.Config.Metadata["foo"], si.Config.Metadata["baz"]; v1 != "bar" || v2 != "quux" {
			t.Fatalf("Metadata is not correct %+v", si.Config.Metadata)
		}
		if si.Config.Compression != nats.S2Compression {
			t.Fatalf("Compression is not correct %+v", si.Config.Compression)
		}
		if si.Config.FirstSeq != 22 {
			t.Fatalf("FirstSeq is not correct %+v", si.Config.FirstSeq)
		}
		if si.Config.ConsumerLimits != consLimits {
			t.Fatalf("ConsumerLimits is not correct %+v", si.Config.ConsumerLimits)
		}
	})

	t.Run("stream with given name already exists", func(t *testing.T) {
		if _, err := js.AddStream(&nats.StreamConfig{Name: "foo", Description: "desc"}); !errors.Is(err, nats.ErrStreamNameAlreadyInUse) {
			t.Fatalf("Expected error: %v; got: %v", nats.ErrStreamNameAlreadyInUse, err)
		}
	})

	for range 25 {
		js.Publish("foo", []byte("hi"))
	}

	t.Run("stream not found", func(t *testing.T) {
		si, err = js.StreamInfo("bar")
		if !errors.Is(err, nats.ErrStreamNotFound) {
			t.Fatalf("Expected error: %v, got: %v", nats.ErrStreamNotFound, err)
		}
		if si != nil {
			t.Fatalf("StreamInfo should be nil %+v", si)
		}
	})

	t.Run("stream info", func(t *testing.T) {
		si, err = js.StreamInfo("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si == nil || si.Config.Name != "foo" {
			t.Fatalf("StreamInfo is not correct %+v", si)
		}
	})

	t.Run("create bad stream", func(t *testing.T) {
		if _, err := js.AddStream(nil); err != nats.ErrStreamConfigRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamConfigRequired, err)
		}
		if _, err := js.AddStream(&nats.StreamConfig{Name: ""}); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if _, err := js.AddStream(&nats.StreamConfig{Name: "bad.stream.name"}); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		if _, err := js.AddStream(&nats.StreamConfig{Name: "bad stream name"}); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
	})

	t.Run("bad stream info", func(t *testing.T) {
		if _, err := js.StreamInfo(""); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if _, err := js.StreamInfo("bad.stream.name"); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
	})

	t.Run("stream update", func(t *testing.T) {
		if _, err := js.UpdateStream(nil); err != nats.ErrStreamConfigRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamConfigRequired, err)
		}
		if _, err := js.UpdateStream(&nats.StreamConfig{Name: ""}); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if _, err := js.UpdateStream(&nats.StreamConfig{Name: "bad.stream.name"}); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		prevMaxMsgs := si.Config.MaxMsgs
		si, err = js.UpdateStream(&nats.StreamConfig{Name: "foo", MaxMsgs: prevMaxMsgs + 100})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si == nil || si.Config.Name != "foo" || si.Config.MaxMsgs == prevMaxMsgs {
			t.Fatalf("StreamInfo is not correct %+v", si)
		}
	})

	t.Run("create consumer", func(t *testing.T) {
		t.Run("with durable set", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo.dlc")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{
				Durable:   "dlc",
				AckPolicy: nats.AckExplicitPolicy,
				Metadata: map[string]string{
					"foo": "bar",
					"baz": "quux",
				},
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Name != "dlc" || ci.Stream != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
			if v1, v2 := ci.Config.Metadata["foo"], ci.Config.Metadata["baz"]; v1 != "bar" || v2 != "quux" {
				t.Fatalf("Metadata is not correct %+v", ci.Config.Metadata)
			}
		})
		t.Run("with name set", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo.dlc-1")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "dlc-1", AckPolicy: nats.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc-1"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Name != "dlc-1" || ci.Stream != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("with same Durable and Name set", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo.dlc-2")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "dlc-2", Name: "dlc-2", AckPolicy: nats.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc-2"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Name != "dlc-2" || ci.Stream != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("with name and filter subject", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo.dlc-3.foo")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{
				Durable:       "dlc-3",
				AckPolicy:     nats.AckExplicitPolicy,
				FilterSubject: "foo",
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc-3"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Name != "dlc-3" || ci.Stream != "foo" || ci.Config.FilterSubject != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("legacy ephemeral consumer without name", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{AckPolicy: nats.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"stream_name":"foo"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Config.Durable != "" || ci.Stream != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("legacy durable with jetstream context option", func(t *testing.T) {
			jsLegacy, err := nc.JetStream(nats.UseLegacyDurableConsumers())
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.DURABLE.CREATE.foo.dlc-4")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := jsLegacy.AddConsumer("foo", &nats.ConsumerConfig{Durable: "dlc-4", AckPolicy: nats.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc-4"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Config.Durable != "dlc-4" || ci.Stream != "foo" {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("durable consumer with multiple filter subjects", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo.dlc-5")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{
				Durable:        "dlc-5",
				AckPolicy:      nats.AckExplicitPolicy,
				FilterSubjects: []string{"foo", "bar"},
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			msg, err := sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(msg.Data), `"durable_name":"dlc-5"`) {
				t.Fatalf("create consumer message is not correct: %q", string(msg.Data))
			}
			if ci == nil || ci.Config.Durable != "dlc-5" || !reflect.DeepEqual(ci.Config.FilterSubjects, []string{"foo", "bar"}) {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("ephemeral consumer with multiple filter subjects", func(t *testing.T) {
			sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.foo")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()
			ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{
				AckPolicy:      nats.AckExplicitPolicy,
				FilterSubjects: []string{"foo", "bar"},
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			_, err = sub.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if ci == nil || !reflect.DeepEqual(ci.Config.FilterSubjects, []string{"foo", "bar"}) {
				t.Fatalf("ConsumerInfo is not correct %+v", ci)
			}
		})

		t.Run("multiple filter subjects errors", func(t *testing.T) {
			_, err := js.AddConsumer("foo", &nats.ConsumerConfig{
				AckPolicy:      nats.AckExplicitPolicy,
				FilterSubjects: []string{"foo", "bar"},
				FilterSubject:  "baz",
			})
			if !errors.Is(err, nats.ErrDuplicateFilterSubjects) {
				t.Fatalf("Expected: %v; got: %v", nats.ErrDuplicateFilterSubjects, err)
			}
			_, err = js.AddConsumer("foo", &nats.ConsumerConfig{
				AckPolicy:      nats.AckExplicitPolicy,
				FilterSubjects: []string{"foo.*", "foo.A"},
			})
			if !errors.Is(err, nats.ErrOverlappingFilterSubjects) {
				t.Fatalf("Expected: %v; got: %v", nats.ErrOverlappingFilterSubjects, err)
			}
			_, err = js.AddConsumer("foo", &nats.ConsumerConfig{
				AckPolicy:      nats.AckExplicitPolicy,
				FilterSubjects: []string{"foo", ""},
			})
			if !errors.Is(err, nats.ErrEmptyFilter) {
				t.Fatalf("Expected: %v; got: %v", nats.ErrEmptyFilter, err)
			}
		})

		t.Run("with invalid filter subject", func(t *testing.T) {
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Name: "tc", FilterSubject: ".foo"}); !errors.Is(err, nats.ErrInvalidFilterSubject) {
				t.Fatalf("Expected: %v; got: %v", nats.ErrInvalidFilterSubject, err)
			}
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Name: "tc", FilterSubject: "foo."}); !errors.Is(err, nats.ErrInvalidFilterSubject) {
				t.Fatalf("Expected: %v; got: %v", nats.ErrInvalidFilterSubject, err)
			}
		})

		t.Run("with invalid consumer name", func(t *testing.T) {
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "test.durable"}); err != nats.ErrInvalidConsumerName {
				t.Fatalf("Expected: %v; got: %v", nats.ErrInvalidConsumerName, err)
			}
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "test durable"}); err != nats.ErrInvalidConsumerName {
				t.Fatalf("Expected: %v; got: %v", nats.ErrInvalidConsumerName, err)
			}
		})

		t.Run("consumer with given name already exists, configs do not match", func(t *testing.T) {
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "dlc", AckPolicy: nats.AckAllPolicy}); !errors.Is(err, nats.ErrConsumerNameAlreadyInUse) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrConsumerNameAlreadyInUse, err)
			}
		})

		t.Run("consumer with given name already exists, configs are the same", func(t *testing.T) {
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "dlc", AckPolicy: nats.AckExplicitPolicy}); err != nil {
				t.Fatalf("Expected no error; got: %v", err)
			}
		})

		t.Run("stream does not exist", func(t *testing.T) {
			_, err = js.AddConsumer("missing", &nats.ConsumerConfig{Durable: "dlc", AckPolicy: nats.AckExplicitPolicy})
			if err != nats.ErrStreamNotFound {
				t.Fatalf("Expected stream not found error, got: %v", err)
			}
		})

		t.Run("params validation error", func(t *testing.T) {
			_, err = js.AddConsumer("", &nats.ConsumerConfig{Durable: "dlc", AckPolicy: nats.AckExplicitPolicy})
			if err != nats.ErrStreamNameRequired {
				t.Fatalf("Expected %v, got: %v", nats.ErrStreamNameRequired, err)
			}
			_, err = js.AddConsumer("bad.stream.name", &nats.ConsumerConfig{Durable: "dlc", AckPolicy: nats.AckExplicitPolicy})
			if err != nats.ErrInvalidStreamName {
				t.Fatalf("Expected %v, got: %v", nats.ErrInvalidStreamName, err)
			}
			_, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "bad.consumer.name", AckPolicy: nats.AckExplicitPolicy})
			if err != nats.ErrInvalidConsumerName {
				t.Fatalf("Expected %v, got: %v", nats.ErrInvalidConsumerName, err)
			}
		})
	})

	t.Run("consumer info", func(t *testing.T) {
		if _, err := js.ConsumerInfo("", "dlc"); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if _, err := js.ConsumerInfo("bad.stream.name", "dlc"); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		if _, err := js.ConsumerInfo("foo", ""); err != nats.ErrConsumerNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrConsumerNameRequired, err)
		}
		if _, err := js.ConsumerInfo("foo", "bad.consumer.name"); err != nats.ErrInvalidConsumerName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidConsumerName, err)
		}
		ci, err := js.ConsumerInfo("foo", "dlc")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ci == nil || ci.Config.Durable != "dlc" {
			t.Fatalf("ConsumerInfo is not correct %+v", si)
		}
	})

	t.Run("consumer not found", func(t *testing.T) {
		ci, err := js.ConsumerInfo("foo", "cld")
		if !errors.Is(err, nats.ErrConsumerNotFound) {
			t.Fatalf("Expected error: %v, got: %v", nats.ErrConsumerNotFound, err)
		}
		if ci != nil {
			t.Fatalf("ConsumerInfo should be nil %+v", ci)
		}
	})

	t.Run("list streams", func(t *testing.T) {
		var infos []*nats.StreamInfo
		for info := range js.Streams() {
			infos = append(infos, info)
		}
		if len(infos) != 1 || infos[0].Config.Name != "foo" {
			t.Fatalf("StreamInfo is not correct %+v", infos)
		}
	})

	t.Run("list consumers", func(t *testing.T) {
		var infos []*nats.ConsumerInfo
		for info := range js.Consumers("") {
			infos = append(infos, info)
		}
		if len(infos) != 0 {
			t.Fatalf("ConsumerInfo is not correct %+v", infos)
		}
		for info := range js.Consumers("bad.stream.name") {
			infos = append(infos, info)
		}
		if len(infos) != 0 {
			t.Fatalf("ConsumerInfo is not correct %+v", infos)
		}
		infos = infos[:0]
		for info := range js.Consumers("foo") {
			infos = append(infos, info)
		}
		if len(infos) != 8 || infos[0].Stream != "foo" {
			t.Fatalf("ConsumerInfo is not correct %+v", infos)
		}
	})

	t.Run("list consumer names", func(t *testing.T) {
		var names []string
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		for name := range js.ConsumerNames("foo", nats.Context(ctx)) {
			names = append(names, name)
		}
		if got, want := len(names), 8; got != want {
			t.Fatalf("Unexpected names, got=%d, want=%d", got, want)
		}
	})

	t.Run("delete consumers", func(t *testing.T) {
		if err := js.DeleteConsumer("", "dlc"); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if err := js.DeleteConsumer("bad.stream.name", "dlc"); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		if err := js.DeleteConsumer("foo", ""); err != nats.ErrConsumerNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrConsumerNameRequired, err)
		}
		if err := js.DeleteConsumer("foo", "bad.consumer.name"); err != nats.ErrInvalidConsumerName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidConsumerName, err)
		}
		if err := js.DeleteConsumer("foo", "dlc"); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
	})

	t.Run("update consumer", func(t *testing.T) {
		ci, err := js.AddConsumer("foo", &nats.ConsumerConfig{
			Durable:        "update_push_consumer",
			DeliverSubject: "bar",
			AckPolicy:      nats.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		// Currently, server supports these fields:
		// description, ack_wait, max_deliver, sample_freq, max_ack_pending, max_waiting and headers_only
		expected := ci.Config
		expected.Description = "my description"
		expected.AckWait = 2 * time.Second
		expected.MaxDeliver = 1
		expected.SampleFrequency = "30"
		expected.MaxAckPending = 10
		expected.HeadersOnly = true

		_, err = js.UpdateConsumer("", &expected)
		if err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected stream name required error, got %v", err)
		}
		_, err = js.UpdateConsumer("bad.stream.name", &expected)
		if err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected stream name required error, got %v", err)
		}
		expected.Durable = ""
		expected.Name = ""
		_, err = js.UpdateConsumer("foo", &expected)
		if err != nats.ErrConsumerNameRequired {
			t.Fatalf("Expected consumer name required error, got %v", err)
		}
		expected.Durable = "bad.consumer.name"
		_, err = js.UpdateConsumer("foo", &expected)
		if err != nats.ErrInvalidConsumerName {
			t.Fatalf("Expected invalid consumer name error, got %v", err)
		}
		expected.Durable = "update_push_consumer"

		_, err = js.UpdateConsumer("foo", nil)
		if err != nats.ErrConsumerConfigRequired {
			t.Fatalf("Expected consumer configuration required error, got %v", err)
		}

		ci, err = js.UpdateConsumer("foo", &expected)
		if err != nil {
			t.Fatalf("Error on update: %v", err)
		}
		expected.Name = "update_push_consumer"
		if !reflect.DeepEqual(ci.Config, expected) {
			t.Fatalf("Expected config to be %+v, got %+v", expected, ci.Config)
		}

		ci, err = js.AddConsumer("foo", &nats.ConsumerConfig{
			Durable:    "update_pull_consumer",
			AckPolicy:  nats.AckExplicitPolicy,
			MaxWaiting: 1,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		expected = ci.Config
		expected.Description = "my description"
		expected.AckWait = 2 * time.Second
		expected.MaxDeliver = 1
		expected.SampleFrequency = "30"
		expected.MaxAckPending = 10
		expected.HeadersOnly = true
		expected.MaxRequestBatch = 10
		expected.MaxRequestExpires = 2 * time.Second
		expected.MaxRequestMaxBytes = 1024

		ci, err = js.UpdateConsumer("foo", &expected)
		if err != nil {
			t.Fatalf("Error on update: %v", err)
		}
		if !reflect.DeepEqual(ci.Config, expected) {
			t.Fatalf("Expected config to be %+v, got %+v", expected, ci.Config)
		}
	})

	t.Run("purge stream", func(t *testing.T) {
		if err := js.PurgeStream(""); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if err := js.PurgeStream("bad.stream.name"); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		if err := js.PurgeStream("foo"); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si, err := js.StreamInfo("foo"); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		} else if si.State.Msgs != 0 {
			t.Fatalf("StreamInfo.Msgs is not correct")
		}
	})

	t.Run("list stream names", func(t *testing.T) {
		var names []string
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		for name := range js.StreamNames(nats.Context(ctx)) {
			names = append(names, name)
		}
		if got, want := len(names), 1; got != want {
			t.Fatalf("Unexpected names, got=%d, want=%d", got, want)
		}
	})

	t.Run("delete stream", func(t *testing.T) {
		if err := js.DeleteStream(""); err != nats.ErrStreamNameRequired {
			t.Fatalf("Expected %v, got %v", nats.ErrStreamNameRequired, err)
		}
		if err := js.DeleteStream("bad.stream.name"); err != nats.ErrInvalidStreamName {
			t.Fatalf("Expected %v, got %v", nats.ErrInvalidStreamName, err)
		}
		if err := js.DeleteStream("foo"); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if _, err := js.StreamInfo("foo"); err == nil {
			t.Fatalf("Unexpected success")
		}
	})

	t.Run("fetch account info", func(t *testing.T) {
		info, err := js.AccountInfo()
		if err != nil {
			t.Fatal(err)
		}
		if info.Limits.MaxMemory != 67108864 {
			t.Errorf("Expected to have memory limits, got: %v", info.Limits.MaxMemory)
		}
		if info.Limits.MaxStore != 67108864 {
			t.Errorf("Expected to have disk limits, got: %v", info.Limits.MaxMemory)
		}
		if info.Limits.MaxStreams != -1 {
			t.Errorf("Expected to not have stream limits, got: %v", info.Limits.MaxStreams)
		}
		if info.Limits.MaxConsumers != -1 {
			t.Errorf("Expected to not have consumer limits, got: %v", info.Limits.MaxConsumers)
		}
		if info.API.Total == 0 {
			t.Errorf("Expected some API calls, got: %v", info.API.Total)
		}
		if info.API.Errors == 0 {
			t.Errorf("Expected some API error, got: %v", info.API.Errors)
		}
	})
}

func TestStreamConfigMatches(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		cfg := nats.StreamConfig{
			Name:                 "stream",
			Description:          "desc",
			Subjects:             []string{"foo.*"},
			Retention:            nats.WorkQueuePolicy,
			MaxConsumers:         10,
			MaxMsgs:              100,
			MaxBytes:             1000,
			Discard:              nats.DiscardNew,
			DiscardNewPerSubject: true,
			MaxAge:               100 * time.Second,
			MaxMsgsPerSubject:    1000,
			MaxMsgSize:           10000,
			Storage:              nats.MemoryStorage,
			Replicas:             1,
			NoAck:                true,
			Duplicates:           10 * time.Second,
			Sealed:               false,
			DenyDelete:           true,
			DenyPurge:            false,
			AllowRollup:          true,
			Compression:          nats.S2Compression,
			FirstSeq:             5,
			SubjectTransform:     &nats.SubjectTransformConfig{Source: ">", Destination: "transformed.>"},
			RePublish: &nats.RePublish{
				Source:      ">",
				Destination: "RP.>",
				HeadersOnly: true,
			},
			AllowDirect: true,
			ConsumerLimits: nats.StreamConsumerLimits{
				InactiveThreshold: 10 * time.Second,
				MaxAckPending:     500,
			},
		}

		s, err := js.AddStream(&cfg)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		// server will set metadata values, so we need to clear them
		s.Config.Metadata = nil
		if !reflect.DeepEqual(s.Config, cfg) {
			t.Fatalf("StreamConfig doesn't match: %#v", s.Config)
		}

		cfgMirror := nats.StreamConfig{
			Name:              "mirror",
			MaxConsumers:      10,
			MaxMsgs:           100,
			MaxBytes:          1000,
			MaxAge:            100 * time.Second,
			MaxMsgsPerSubject: 1000,
			MaxMsgSize:        10000,
			Replicas:          1,
			Duplicates:        10 * time.Second,
			Mirror: &nats.StreamSource{
				Name:        "stream",
				OptStartSeq: 10,
				SubjectTransforms: []nats.SubjectTransformConfig{
					{Source: ">", Destination: "transformed.>"},
				},
			},
			MirrorDirect:     true,
			SubjectTransform: &nats.SubjectTransformConfig{Source: ">", Destination: "transformed.>"},
		}

		s, err = js.AddStream(&cfgMirror)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		s.Config.Metadata = nil
		if !reflect.DeepEqual(s.Config, cfgMirror) {
			t.Fatalf("StreamConfig doesn't match: %#v", s.Config)
		}

		cfgSourcing := nats.StreamConfig{
			Name:              "sourcing",
			Subjects:          []string{"BAR"},
			MaxConsumers:      10,
			MaxMsgs:           100,
			MaxBytes:          1000,
			MaxAge:            100 * time.Second,
			MaxMsgsPerSubject: 1000,
			MaxMsgSize:        10000,
			Replicas:          1,
			Duplicates:        10 * time.Second,
			Sources: []*nats.StreamSource{
				{
					Name:        "stream",
					OptStartSeq: 10,
					SubjectTransforms: []nats.SubjectTransformConfig{
						{Source: ">", Destination: "transformed.>"},
					},
				},
			},
			SubjectTransform: &nats.SubjectTransformConfig{Source: ">", Destination: "transformed.>"},
		}

		s, err = js.AddStream(&cfgSourcing)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		s.Config.Metadata = nil
		if !reflect.DeepEqual(s.Config, cfgSourcing) {
			t.Fatalf("StreamConfig doesn't match: %#v", s.Config)
		}
	})
}

func TestJetStreamClusterStreamLeaderChangeClientErr(t *testing.T) {
	t.Skip("The 2.9 server changed behavior making this test fail now")
}

func TestJetStreamConsumerConfigReplicasAndMemStorage(t *testing.T) {
	c := newTester(t)
	inst := c.CreateCluster(t, 3, true)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)
	waitForJSCluster(t, nc)

	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	if _, err := js.AddStream(&nats.StreamConfig{
		Name:     "CR",
		Subjects: []string{"foo"},
		Replicas: 3,
	}); err != nil {
		t.Fatalf("Error adding stream: %v", err)
	}

	// We can't really check if the consumer ends-up with memory storage or not.
	// We are simply going to create a NATS subscription on the request subject
	// and make sure that the request contains "mem_storage:true".
	sub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.CR.dur")
	if err != nil {
		t.Fatalf("Error on subscribe: %v", err)
	}

	ci, err := js.AddConsumer("CR", &nats.ConsumerConfig{
		Durable:        "dur",
		DeliverSubject: "bar",
		Replicas:       1,
		MemoryStorage:  true,
	})
	if err != nil {
		t.Fatalf("Error adding consumer: %v", err)
	}
	if n := len(ci.Cluster.Replicas); n > 0 {
		t.Fatalf("Expected replicas to be 1, got %+v", ci.Cluster)
	}
	msg, err := sub.NextMsg(time.Second)
	if err != nil {
		t.Fatalf("Error on next msg: %v", err)
	}
	if str := string(msg.Data); !strings.Contains(str, "mem_storage\":true") {
		t.Fatalf("Does not look like the request asked for memory storage: %s", str)
	}
}

func TestJetStreamRePublish(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{
			Name:     "RP",
			Storage:  nats.MemoryStorage,
			Subjects: []string{"foo", "bar", "baz"},
			RePublish: &nats.RePublish{
				Source:      ">",
				Destination: "RP.>",
			},
		}); err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}

		sub, err := nc.SubscribeSync("RP.>")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		msg, toSend := []byte("OK TO REPUBLISH?"), 100
		for range toSend {
			js.Publish("foo", msg)
			js.Publish("bar", msg)
			js.Publish("baz", msg)
		}

		lseq := map[string]int{
			"foo": 0,
			"bar": 0,
			"baz": 0,
		}

		for i := 1; i <= toSend; i++ {
			m, err := sub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on next msg: %v", err)
			}
			stream := m.Header.Get(nats.JSStream)
			if stream != "RP" {
				t.Fatalf("Unexpected header: %+v", m.Header)
			}
			seq, err := strconv.Atoi(m.Header.Get(nats.JSSequence))
			if err != nil {
				t.Fatalf("Error decoding sequence for %s", m.Header.Get(nats.JSSequence))
			}
			if seq != i {
				t.Fatalf("Expected sequence to be %v, got %v", i, seq)
			}
			last, err := strconv.Atoi(m.Header.Get(nats.JSLastSequence))
			if err != nil {
				t.Fatalf("Error decoding last sequence for %s", m.Header.Get(nats.JSLastSequence))
			}
			if last != lseq[m.Subject] {
				t.Fatalf("Expected last sequence to be %v, got %v", lseq[m.Subject], last)
			}
			lseq[m.Subject] = seq
		}
	})
}

func TestJetStreamDirectGetMsg(t *testing.T) {
	// Using standalone server here, we are testing the client side API, not
	// the server feature, which has tests checking it works in cluster mode.
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		si, err := js.AddStream(&nats.StreamConfig{
			Name:     "DGM",
			Storage:  nats.MemoryStorage,
			Subjects: []string{"foo", "bar"},
		})
		if err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}

		send := func(subj, body string) {
			t.Helper()
			if _, err := js.Publish(subj, []byte(body)); err != nil {
				t.Fatalf("Error on publish: %v", err)
			}
		}

		send("foo", "a")
		send("foo", "b")
		send("foo", "c")
		send("bar", "d")
		send("foo", "e")

		// Without AllowDirect, we should get no responders
		if _, err := js.GetMsg("DGM", 1, nats.DirectGet()); err != nats.ErrNoResponders {
			t.Fatalf("Unexpected error: %v", err)
		}

		si.Config.AllowDirect = true
		si, err = js.UpdateStream(&si.Config)
		if err != nil {
			t.Fatalf("Error updating stream: %v", err)
		}
		if !si.Config.AllowDirect {
			t.Fatalf("AllowDirect should be true: %+v", si)
		}

		check := func(seq uint64, opt nats.JSOpt, useGetLast bool, expectedSubj string, expectedSeq uint64, expectedBody string) {
			t.Helper()

			var msg *nats.RawStreamMsg
			var err error
			if useGetLast {
				msg, err = js.GetLastMsg("DGM", expectedSubj, []nats.JSOpt{opt}...)
			} else {
				msg, err = js.GetMsg("DGM", seq, []nats.JSOpt{opt}...)
			}
			if err != nil {
				t.Fatalf("Unable to get message: %v", err)
			}
			if msg.Subject != expectedSubj {
				t.Fatalf("Expected subject %q, got %q", expectedSubj, msg.Subject)
			}
			if msg.Sequence != expectedSeq {
				t.Fatalf("Expected sequence %v, got %v", expectedSeq, msg.Sequence)
			}
			if msg.Time.IsZero() {
				t.Fatal("Expected timestamp, did not get one")
			}
			if b := string(msg.Data); b != expectedBody {
				t.Fatalf("Expected body %q, got %q", expectedBody, b)
			}
		}

		check(0, nats.DirectGetNext("bar"), false, "bar", 4, "d")
		check(0, nats.DirectGet(), true, "foo", 5, "e")
		check(0, nats.DirectGetNext("foo"), false, "foo", 1, "a")
		check(4, nats.DirectGetNext("foo"), false, "foo", 5, "e")
		check(2, nats.DirectGetNext("foo"), false, "foo", 2, "b")

		msg := nats.NewMsg("foo")
		msg.Header.Set("MyHeader", "MyValue")
		if _, err := js.PublishMsg(msg); err != nil {
			t.Fatalf("Error publishing message: %v", err)
		}
		r, err := js.GetMsg("DGM", 6, nats.DirectGet())
		if err != nil {
			t.Fatalf("Error getting message: %v", err)
		}
		if v := r.Header.Get("MyHeader"); v != "MyValue" {
			t.Fatalf("Expected header to be present, was not: %v", r.Header)
		}

		if _, err := js.GetMsg("DGM", 100, nats.DirectGet()); err != nats.ErrMsgNotFound {
			t.Fatalf("Expected not found error, got %v", err)
		}
		if _, err := js.GetMsg("DGM", 0, nats.DirectGet()); err == nil || !strings.Contains(err.Error(), "Empty Request") {
			t.Fatalf("Unexpected error: %v", err)
		}

		r, err = js.GetLastMsg("DGM", "bar", nats.DirectGet())
		if err != nil {
			t.Fatalf("Error getting message: %v", err)
		}
		if r.Subject != "bar" {
			t.Fatalf("expected subject to be 'bar', got: %v", r.Subject)
		}
		if string(r.Data) != "d" {
			t.Fatalf("expected data to be 'd', got: %v", string(r.Data))
		}
	})
}

func TestJetStreamConsumerReplicasOption(t *testing.T) {
	c := newTester(t)
	inst := c.CreateCluster(t, 3, true)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)
	waitForJSCluster(t, nc)

	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	if _, err := js.AddStream(&nats.StreamConfig{
		Name:     "ConsumerReplicasTest",
		Subjects: []string{"foo"},
		Replicas: 3,
	}); err != nil {
		t.Fatalf("Error adding stream: %v", err)
	}

	// Subscribe to the stream with a durable consumer "bar" and replica set to 1.
	cb := func(msg *nats.Msg) {}
	_, err = js.Subscribe("foo", cb, nats.Durable("bar"), nats.ConsumerReplicas(1))
	if err != nil {
		t.Fatalf("Error on subscribe: %v", err)
	}

	consInfo, err := js.ConsumerInfo("ConsumerReplicasTest", "bar")
	if err != nil {
		t.Fatalf("Error getting consumer info: %v", err)
	}

	if consInfo.Config.Replicas != 1 {
		t.Fatalf("Expected consumer replica to be %v, got %+v", 1, consInfo.Config.Replicas)
	}
}

func TestJetStreamMsgAckShouldErrForConsumerAckNone(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{
			Name:     "ACKNONE",
			Storage:  nats.MemoryStorage,
			Subjects: []string{"foo"},
		}); err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}
		if _, err := js.Publish("foo", []byte("hello")); err != nil {
			t.Fatalf("Error on publish: %v", err)
		}

		sub, err := js.SubscribeSync("foo", nats.OrderedConsumer())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Error getting message: %v", err)
		}
		if err := msg.Ack(); err != nats.ErrCantAckIfConsumerAckNone {
			t.Fatalf("Expected error indicating that sub is AckNone, got %v", err)
		}
	})
}

func TestJetStreamOrderedConsumerRecreateAfterReconnect(t *testing.T) {
	c := newTester(t)
	inst := c.CreateServer(t, true)
	t.Cleanup(func() { inst.Destroy(t) })

	// monitor for ErrConsumerNotActive error and suppress logging
	hbMissed := make(chan struct{}, 10)
	errHandler := func(c *nats.Conn, s *nats.Subscription, err error) {
		if !errors.Is(err, nats.ErrConsumerNotActive) {
			t.Errorf("Unexpected error: %v", err)
			return
		}
		select {
		case hbMissed <- struct{}{}:
		default:
		}
	}
	nc := dialInstance(t, inst, nats.ErrorHandler(errHandler))
	c.WaitForJetStream(t, nc)

	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	if _, err := js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}}); err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	sub, err := js.SubscribeSync("FOO.A", nats.OrderedConsumer(), nats.IdleHeartbeat(100*time.Millisecond))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	consInfo, err := sub.ConsumerInfo()
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	consName := consInfo.Name
	// validate that the generated name of the consumer is 8
	// characters long (shorter than standard nuid)
	if len(consName) != 8 {
		t.Fatalf("Unexpected consumer name: %q", consName)
	}
	if _, err := js.Publish("FOO.A", []byte("msg 1")); err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	msg, err := sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	if string(msg.Data) != "msg 1" {
		t.Fatalf("Invalid msg value; want: 'msg 1'; got: %q", string(msg.Data))
	}

	apiSub, err := nc.SubscribeSync("$JS.API.CONSUMER.*.>")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	// restart the server (stop/start is observed to keep storage; not contractual)
	inst.StopServer(t, inst.Servers[0])
	inst.StartServer(t, inst.Servers[0])
	c.WaitForJetStream(t, nc)

	// wait until we miss heartbeat
	select {
	case <-hbMissed:
	case <-time.After(10 * time.Second):
		t.Fatalf("Did not receive consumer not active error")
	}
	consDeleteMsg, err := apiSub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	if !strings.HasPrefix(consDeleteMsg.Subject, "$JS.API.CONSUMER.") {
		t.Fatalf("Unexpected message subject: %q", consDeleteMsg.Subject)
	}
	consCreateMsg, err := apiSub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	if !strings.HasPrefix(consCreateMsg.Subject, "$JS.API.CONSUMER.") {
		t.Fatalf("Unexpected message subject: %q", consCreateMsg.Subject)
	}
	if _, err := js.Publish("FOO.A", []byte("msg 2")); err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	msg, err = sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	var infoErr error
	for range 5 {
		consInfo, infoErr = sub.ConsumerInfo()
		if infoErr != nil {
			if errors.Is(infoErr, nats.ErrConsumerInfoOnOrderedReset) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			t.Fatalf("Unexpected error: %v", err)
		}
		infoErr = nil
		break
	}
	if infoErr != nil {
		t.Fatalf("Unexpected error: %v", infoErr)
	}
	if consInfo.Name == consName || len(consInfo.Name) != 8 {
		t.Fatalf("Unexpected consumer name: %q", consInfo.Name)
	}

	if string(msg.Data) != "msg 2" {
		t.Fatalf("Invalid msg value; want: 'msg 2'; got: %q", string(msg.Data))
	}
}

func TestJetStreamCreateStreamDiscardPolicy(t *testing.T) {
	tests := []struct {
		name                 string
		discardPolicy        nats.DiscardPolicy
		discardNewPerSubject bool
		maxMsgsPerSubject    int64
		withAPIError         bool
	}{
		{
			name:                 "with discard policy 'new' and discard new per subject set",
			discardPolicy:        nats.DiscardNew,
			discardNewPerSubject: true,
			maxMsgsPerSubject:    100,
		},
		{
			name:                 "with discard policy 'new' and discard new per subject not set",
			discardPolicy:        nats.DiscardNew,
			discardNewPerSubject: false,
			maxMsgsPerSubject:    100,
		},
		{
			name:                 "with discard policy 'old' and discard new per subject set",
			discardPolicy:        nats.DiscardOld,
			discardNewPerSubject: true,
			maxMsgsPerSubject:    100,
			withAPIError:         true,
		},
		{
			name:                 "with discard policy 'old' and discard new per subject not set",
			discardPolicy:        nats.DiscardOld,
			discardNewPerSubject: true,
			maxMsgsPerSubject:    100,
			withAPIError:         true,
		},
		{
			name:                 "with discard policy 'new' and discard new per subject set and max msgs per subject not set",
			discardPolicy:        nats.DiscardNew,
			discardNewPerSubject: true,
			withAPIError:         true,
		},
	}

	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for i, test := range tests {
			t.Run(test.name, func(t *testing.T) {
				streamName := fmt.Sprintf("FOO%d", i)

				_, err := js.AddStream(&nats.StreamConfig{
					Name:                 streamName,
					Discard:              test.discardPolicy,
					DiscardNewPerSubject: test.discardNewPerSubject,
					MaxMsgsPerSubject:    test.maxMsgsPerSubject,
				})

				if test.withAPIError {
					var apiErr *nats.APIError
					if err == nil {
						t.Fatalf("Expected error, got nil")
					}
					if ok := errors.As(err, &apiErr); !ok {
						t.Fatalf("Expected nats.APIError, got %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				info, err := js.StreamInfo(streamName)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				if info.Config.Discard != test.discardPolicy {
					t.Fatalf("Invalid value of discard policy; want: %s; got: %s", test.discardPolicy.String(), info.Config.Discard.String())
				}
				if info.Config.DiscardNewPerSubject != test.discardNewPerSubject {
					t.Fatalf("Invalid value of discard_new_per_subject; want: %t; got: %t", test.discardNewPerSubject, info.Config.DiscardNewPerSubject)
				}
			})
		}
	})
}

func TestJetStreamStreamInfoAlternates(t *testing.T) {
	c := newTester(t)
	inst := c.CreateCluster(t, 3, true)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)
	waitForJSCluster(t, nc)

	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	_, err = js.AddStream(&nats.StreamConfig{
		Name:     "TEST",
		Subjects: []string{"foo"},
	})
	expectOk(t, err)

	_, err = js.AddStream(&nats.StreamConfig{
		Name: "MIRROR",
		Mirror: &nats.StreamSource{
			Name: "TEST",
		},
	})
	expectOk(t, err)

	si, err := js.StreamInfo("TEST")
	expectOk(t, err)

	if len(si.Alternates) != 2 {
		t.Fatalf("Expected 2 alternates, got %d", len(si.Alternates))
	}
}

func TestJetStreamSubscribeConsumerName(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo", "bar", "baz", "foo.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.Publish("foo", []byte("first"))
		if err != nil {
			t.Fatal(err)
		}

		_, err = js.StreamInfo("TEST")
		if err != nil {
			t.Fatalf("stream lookup failed: %v", err)
		}

		sub, err := js.SubscribeSync("foo", nats.ConsumerName("my-ephemeral"))
		if err != nil {
			t.Fatal(err)
		}
		cinfo, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}
		got := cinfo.Config.Name
		expected := "my-ephemeral"
		if got != expected {
			t.Fatalf("Expected: %v, got: %v", expected, got)
		}
		got = cinfo.Config.Durable
		expected = ""
		if got != expected {
			t.Fatalf("Expected: %v, got: %v", expected, got)
		}
		_, err = sub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatal(err)
		}

		// ConsumerName will be ignored in case a durable name has been set.
		sub, err = js.SubscribeSync("foo", nats.Durable("durable"), nats.ConsumerName("custom-name"))
		if err != nil {
			t.Fatal(err)
		}
		cinfo, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}
		got = cinfo.Config.Name
		expected = "durable"
		if got != expected {
			t.Fatalf("Expected: %v, got: %v", expected, got)
		}
		got = cinfo.Config.Durable
		expected = "durable"
		if got != expected {
			t.Fatalf("Expected: %v, got: %v", expected, got)
		}
		_, err = sub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatal(err)
		}

		// Default Ephemeral name should be short like in the server.
		sub, err = js.SubscribeSync("foo", nats.ConsumerName(""))
		if err != nil {
			t.Fatal(err)
		}
		cinfo, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}
		expectedSize := 8
		result := len(cinfo.Config.Name)
		if result != expectedSize {
			t.Fatalf("Expected: %v, got: %v", expectedSize, result)
		}
	})
}

func TestJetStreamOrderedConsumerDeleteAssets(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// For capturing errors.
		errCh := make(chan error, 1)
		nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			errCh <- err
		})

		// Create a sample asset.
		mlen := 128 * 1024
		msg := make([]byte, mlen)

		createStream := func() {
			t.Helper()
			_, err = js.AddStream(&nats.StreamConfig{
				Name:     "OBJECT",
				Subjects: []string{"a"},
				Storage:  nats.MemoryStorage,
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			const chunkSize = 256
			for i := 0; i < mlen; i += chunkSize {
				var chunk []byte
				if mlen-i <= chunkSize {
					chunk = msg[i:]
				} else {
					chunk = msg[i : i+chunkSize]
				}
				js.PublishAsync("a", chunk)
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Second):
				t.Fatalf("Did not receive completion signal")
			}
		}

		t.Run("remove stream, expect error", func(t *testing.T) {
			createStream()

			sub, err := js.SubscribeSync("a", nats.OrderedConsumer(), nats.IdleHeartbeat(200*time.Millisecond))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()

			// Since we are sync we will be paused here due to flow control.
			time.Sleep(100 * time.Millisecond)
			if err := js.DeleteStream("OBJECT"); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			select {
			case err := <-errCh:
				if !errors.Is(err, nats.ErrStreamNotFound) {
					t.Fatalf("Got wrong error, wanted %v, got %v", nats.ErrStreamNotFound, err)
				}
			case <-time.After(time.Second):
				t.Fatalf("Did not receive err message as expected")
			}
		})

		t.Run("remove consumer, expect it to be recreated", func(t *testing.T) {
			createStream()

			createConsSub, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.OBJECT.*.a")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer createConsSub.Unsubscribe()
			// Again here the IdleHeartbeat is not required, just overriding top shorten test time.
			sub, err := js.SubscribeSync("a", nats.OrderedConsumer(), nats.IdleHeartbeat(200*time.Millisecond))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer sub.Unsubscribe()

			createConsMsg, err := createConsSub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(createConsMsg.Data), `"stream_name":"OBJECT"`) {
				t.Fatalf("Invalid message on create consumer subject: %q", string(createConsMsg.Data))
			}

			time.Sleep(100 * time.Millisecond)
			ci, err := sub.ConsumerInfo()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			consName := ci.Name

			if err := js.DeleteConsumer("OBJECT", consName); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			createConsMsg, err = createConsSub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if !strings.Contains(string(createConsMsg.Data), `"stream_name":"OBJECT"`) {
				t.Fatalf("Invalid message on create consumer subject: %q", string(createConsMsg.Data))
			}

			time.Sleep(100 * time.Millisecond)
			ci, err = sub.ConsumerInfo()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			newConsName := ci.Name
			if consName == newConsName {
				t.Fatalf("Consumer should be recreated, but consumer name is the same")
			}
		})
	})
}

// We want to make sure we do the right thing with lots of concurrent queue durable consumer requests.
// One should win and the others should share the delivery subject with the first one who wins.
func TestJetStreamConcurrentQueueDurablePushConsumers(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Now create 10 durables concurrently.
		subs := make([]*nats.Subscription, 0, 10)
		var wg sync.WaitGroup
		mx := &sync.Mutex{}

		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sub, _ := js.QueueSubscribeSync("foo", "bar")
				mx.Lock()
				subs = append(subs, sub)
				mx.Unlock()
			}()
		}
		wg.Wait()

		si, err := js.StreamInfo("TEST")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si.State.Consumers != 1 {
			t.Fatalf("Expected exactly one consumer, got %d", si.State.Consumers)
		}

		total := 1000
		for range total {
			js.Publish("foo", []byte("Hello"))
		}

		timeout := time.Now().Add(2 * time.Second)
		got := 0
		for time.Now().Before(timeout) {
			got = 0
			for _, sub := range subs {
				pending, _, _ := sub.Pending()
				if pending == total {
					t.Fatalf("A single member should not have gotten all messages")
				}
				got += pending
			}
			if got == total {
				return
			}
		}
		t.Fatalf("Expected %v messages, got only %v", total, got)
	})
}

func TestJetStreamAckTokens(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		now := time.Now()
		for _, test := range []struct {
			name     string
			expected *nats.MsgMetadata
			str      string
			end      string
			err      bool
		}{
			{
				"valid token size but not js ack",
				nil,
				"1.2.3.4.5.6.7.8.9",
				"",
				true,
			},
			{
				"valid token size but not js ack",
				nil,
				"1.2.3.4.5.6.7.8.9.10.11.12",
				"",
				true,
			},
			{
				"invalid token size",
				nil,
				"$JS.ACK.3.4.5.6.7.8",
				"",
				true,
			},
			{
				"invalid token size",
				nil,
				"$JS.ACK.3.4.5.6.7.8.9.10",
				"",
				true,
			},
			{
				"v1 style",
				&nats.MsgMetadata{
					Stream:       "TEST",
					Consumer:     "cons",
					NumDelivered: 1,
					Sequence: nats.SequencePair{
						Stream:   2,
						Consumer: 3,
					},
					Timestamp:  now,
					NumPending: 4,
				},
				"",
				"",
				false,
			},
			{
				"v2 style no domain with hash",
				&nats.MsgMetadata{
					Stream:       "TEST",
					Consumer:     "cons",
					NumDelivered: 1,
					Sequence: nats.SequencePair{
						Stream:   2,
						Consumer: 3,
					},
					Timestamp:  now,
					NumPending: 4,
				},
				"_.ACCHASH.",
				".abcde",
				false,
			},
			{
				"v2 style with domain and hash",
				&nats.MsgMetadata{
					Domain:       "HUB",
					Stream:       "TEST",
					Consumer:     "cons",
					NumDelivered: 1,
					Sequence: nats.SequencePair{
						Stream:   2,
						Consumer: 3,
					},
					Timestamp:  now,
					NumPending: 4,
				},
				"HUB.ACCHASH.",
				".abcde",
				false,
			},
			{
				"more than 12 tokens",
				&nats.MsgMetadata{
					Domain:       "HUB",
					Stream:       "TEST",
					Consumer:     "cons",
					NumDelivered: 1,
					Sequence: nats.SequencePair{
						Stream:   2,
						Consumer: 3,
					},
					Timestamp:  now,
					NumPending: 4,
				},
				"HUB.ACCHASH.",
				".abcde.ghijk.lmnop",
				false,
			},
		} {
			t.Run(test.name, func(t *testing.T) {
				msg := nats.NewMsg("foo")
				msg.Sub = sub
				if test.err {
					msg.Reply = test.str
				} else {
					msg.Reply = fmt.Sprintf("$JS.ACK.%sTEST.cons.1.2.3.%v.4%s", test.str, now.UnixNano(), test.end)
				}

				meta, err := msg.Metadata()
				if test.err {
					if err == nil || meta != nil {
						t.Fatalf("Expected error for content: %q, got meta=%+v err=%v", test.str, meta, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Expected: %+v with reply: %q, got error %v", test.expected, msg.Reply, err)
				}
				if meta.Timestamp.UnixNano() != now.UnixNano() {
					t.Fatalf("Timestamp is bad: %v vs %v", now.UnixNano(), meta.Timestamp.UnixNano())
				}
				meta.Timestamp = time.Time{}
				test.expected.Timestamp = time.Time{}
				if !reflect.DeepEqual(test.expected, meta) {
					t.Fatalf("Expected %+v, got %+v", test.expected, meta)
				}
			})
		}
	})
}

func TestJetStreamTracing(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
		// Open a dedicated connection without the default JetStream context
		// from withJSServer to wire in the ClientTrace.
		nc := dialInstance(t, inst)
		defer nc.Close()

		ctr := 0
		js, err := nc.JetStream(&nats.ClientTrace{
			RequestSent: func(subj string, payload []byte) {
				ctr++
				if subj != "$JS.API.STREAM.CREATE.X" {
					t.Fatalf("Expected sent trace to %s: got: %s", "$JS.API.STREAM.CREATE.X", subj)
				}
			},
			ResponseReceived: func(subj string, payload []byte, hdr nats.Header) {
				ctr++
				if subj != "$JS.API.STREAM.CREATE.X" {
					t.Fatalf("Expected received trace to %s: got: %s", "$JS.API.STREAM.CREATE.X", subj)
				}
			},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "X"})
		if err != nil {
			t.Fatalf("add stream failed: %s", err)
		}
		if ctr != 2 {
			t.Fatalf("did not receive all trace events: %d", ctr)
		}
	})
}

func TestJetStreamExpiredPullRequests(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := js.PullSubscribe("foo", "bar", nats.PullMaxWaiting(2))
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		// Make sure that we reject batch < 1
		if _, err := sub.Fetch(0); err == nil {
			t.Fatal("Expected error, did not get one")
		}
		if _, err := sub.Fetch(-1); err == nil {
			t.Fatal("Expected error, did not get one")
		}

		for range 2 {
			if _, err = sub.Fetch(1, nats.MaxWait(15*time.Millisecond)); err == nil {
				t.Fatalf("Expected error, got none")
			}
		}
		// Wait before the above expire
		time.Sleep(50 * time.Millisecond)
		batches := []int{1, 10}
		for _, bsz := range batches {
			start := time.Now()
			_, err = sub.Fetch(bsz, nats.MaxWait(250*time.Millisecond))
			dur := time.Since(start)
			if err == nil || dur < 50*time.Millisecond {
				t.Fatalf("Expected error and wait for 250ms, got err=%v and dur=%v", err, dur)
			}
		}
	})
}

func TestJetStreamSyncSubscribeWithMaxAckPending(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{Name: "MAX_ACK_PENDING", Subjects: []string{"foo"}}); err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}

		// By default, the sync subscription will be created with a MaxAckPending equal
		// to the internal sync queue len, which is 64K. So that should error out
		// and make sure we get the actual limit

		checkSub := func(pull bool) {
			var sub *nats.Subscription
			var err error
			if pull {
				_, err = js.PullSubscribe("foo", "bar")
			} else {
				_, err = js.SubscribeSync("foo")
			}
			if err == nil || !strings.Contains(err.Error(), "system limit of 123") {
				t.Fatalf("Unexpected error: %v", err)
			}

			// But it should work if we use MaxAckPending() with lower value
			if pull {
				sub, err = js.PullSubscribe("foo", "bar", nats.MaxAckPending(64))
			} else {
				sub, err = js.SubscribeSync("foo", nats.MaxAckPending(64))
			}
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			sub.Unsubscribe()
		}
		checkSub(false)
		checkSub(true)
	}, testservice.WithJetStream(`limits { max_ack_pending: 123 }`))
}

func TestJetStreamClusterPlacement(t *testing.T) {
	// There used to be a test here that would not work because it would require
	// all servers in the cluster to know about each other tags. So we will simply
	// verify that if a stream is configured with placement and tags, the proper
	// "stream create" request is sent.
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := nc.SubscribeSync("$JS.API.STREAM.CREATE.TEST")
		if err != nil {
			t.Fatalf("Error on sub: %v", err)
		}
		js.AddStream(&nats.StreamConfig{
			Name: "TEST",
			Placement: &nats.Placement{
				Tags: []string{"my_tag"},
			},
		})
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Error getting stream create request: %v", err)
		}
		var req nats.StreamConfig
		if err := json.Unmarshal(msg.Data, &req); err != nil {
			t.Fatalf("Unmarshal error: %v", err)
		}
		if req.Placement == nil {
			t.Fatal("Expected placement, did not get it")
		}
		if n := len(req.Placement.Tags); n != 1 {
			t.Fatalf("Expected 1 tag, got %v", n)
		}
		if v := req.Placement.Tags[0]; v != "my_tag" {
			t.Fatalf("Unexpected tag: %q", v)
		}
	})
}

func TestJetStreamConsumerMemoryStorage(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{Name: "STR", Subjects: []string{"foo"}}); err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}

		// Pull ephemeral consumer with memory storage.
		sub, err := js.PullSubscribe("foo", "", nats.ConsumerMemoryStorage())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		consInfo, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Error getting consumer info: %v", err)
		}

		if !consInfo.Config.MemoryStorage {
			t.Fatalf("Expected memory storage to be %v, got %+v", true, consInfo.Config.MemoryStorage)
		}

		sub, err = js.SubscribeSync("foo", nats.ConsumerMemoryStorage())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		consInfo, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Error getting consumer info: %v", err)
		}

		if !consInfo.Config.MemoryStorage {
			t.Fatalf("Expected memory storage to be %v, got %+v", true, consInfo.Config.MemoryStorage)
		}

		cb := func(msg *nats.Msg) {}
		sub, err = js.Subscribe("foo", cb, nats.ConsumerMemoryStorage())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		consInfo, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Error getting consumer info: %v", err)
		}

		if !consInfo.Config.MemoryStorage {
			t.Fatalf("Expected memory storage to be %v, got %+v", true, consInfo.Config.MemoryStorage)
		}
	})
}

func TestJetStreamStreamInfoWithSubjectDetails(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"test.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Publish on enough subjects to exercise the pagination
		payload := make([]byte, 10)
		for i := range 100001 {
			_, err := js.Publish(fmt.Sprintf("test.%d", i), payload)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
		}

		result, err := js.StreamInfo("TEST", &nats.StreamInfoRequest{SubjectsFilter: ">"})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if len(result.State.Subjects) != 100001 {
			t.Fatalf("expected 100001 subjects in the stream, but got %d instead", len(result.State.Subjects))
		}

		result, err = js.StreamInfo("TEST")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if len(result.State.Subjects) != 0 {
			t.Fatalf("expected 0 subjects details from StreamInfo, but got %d instead", len(result.State.Subjects))
		}
	})
}

func TestStreamNameBySubject(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"test.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for _, test := range []struct {
			name       string
			streamName string
			err        error
		}{

			{name: "valid wildcard lookup", streamName: "test.*", err: nil},
			{name: "valid explicit lookup", streamName: "test.a", err: nil},
			{name: "lookup on not existing stream", streamName: "not.existing", err: nats.ErrNoMatchingStream},
		} {

			stream, err := js.StreamNameBySubject(test.streamName)
			if err != test.err {
				t.Fatalf("expected %v, got %v", test.err, err)
			}

			if stream != "TEST" && err == nil {
				t.Fatalf("returned stream name should be 'TEST'")
			}
		}
	})
}

func TestJetStreamTransform(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:             "ORIGIN",
			Subjects:         []string{"test"},
			SubjectTransform: &nats.SubjectTransformConfig{Source: ">", Destination: "transformed.>"},
			Storage:          nats.MemoryStorage,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		err = nc.Publish("test", []byte("1"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Subjects: []string{},
			Name:     "SOURCING",
			Sources:  []*nats.StreamSource{{Name: "ORIGIN", SubjectTransforms: []nats.SubjectTransformConfig{{Source: ">", Destination: "fromtest.>"}}}},
			Storage:  nats.MemoryStorage,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := js.SubscribeSync("fromtest.>", nats.ConsumerMemoryStorage(), nats.BindStream("SOURCING"))
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}

		m, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if m.Subject != "fromtest.transformed.test" {
			t.Fatalf("the subject of the message doesn't match the expected fromtest.transformed.test: %s", m.Subject)
		}
	})
}

func TestPullConsumerFetchRace(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for i := range 3 {
			if _, err := js.Publish("FOO.123", []byte(fmt.Sprintf("msg-%d", i))); err != nil {
				t.Fatalf("Unexpected error during publish: %s", err)
			}
		}
		sub, err := js.PullSubscribe("FOO.123", "")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		cons, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		msgs, err := sub.FetchBatch(5)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		errCh := make(chan error)
		go func() {
			for {
				err := msgs.Error()
				if err != nil {
					errCh <- err
					return
				}
			}
		}()
		deleteErrCh := make(chan error, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			if err := js.DeleteConsumer("foo", cons.Name); err != nil {
				deleteErrCh <- err
			}
			close(deleteErrCh)
		}()

		var i int
		for msg := range msgs.Messages() {
			if string(msg.Data) != fmt.Sprintf("msg-%d", i) {
				t.Fatalf("Invalid msg on index %d; expected: %s; got: %s", i, fmt.Sprintf("msg-%d", i), string(msg.Data))
			}
			i++
		}
		if i != 3 {
			t.Fatalf("Invalid number of messages received; want: %d; got: %d", 5, i)
		}
		select {
		case err := <-errCh:
			if !errors.Is(err, nats.ErrConsumerDeleted) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrConsumerDeleted, err)
			}
		case <-time.After(1 * time.Second):
			t.Fatalf("Expected error: %v; got: %v", nats.ErrConsumerDeleted, nil)
		}

		// wait until the consumer is deleted, otherwise we may close the connection
		// before the consumer delete response is received
		select {
		case ert, ok := <-deleteErrCh:
			if !ok {
				break
			}
			t.Fatalf("Error deleting consumer: %s", ert)
		case <-time.After(1 * time.Second):
			t.Fatalf("Expected done to be closed")
		}
	})
}

func TestJetStreamSubscribeConsumerCreateTimeout(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		_, err = js.SubscribeSync("", nats.BindStream("foo"), nats.Context(ctx))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Expected error")
		}
	})
}

func TestJetStreamPullSubscribeFetchErrOnReconnect(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		sub, err := js.PullSubscribe("FOO.123", "bar")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		errs := make(chan error, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			errs <- nc.ForceReconnect()
		}()
		_, err = sub.Fetch(1, nats.MaxWait(time.Second))
		if !errors.Is(err, nats.ErrFetchDisconnected) {
			t.Fatalf("Expected error: %v; got: %v", nats.ErrFetchDisconnected, err)
		}
		if err := <-errs; err != nil {
			t.Fatalf("Error on reconnect: %v", err)
		}
	})
}

func TestJetStreamPullSubscribeFetchBatchErrOnReconnect(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		sub, err := js.PullSubscribe("FOO.123", "bar")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		defer sub.Unsubscribe()
		errs := make(chan error, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			errs <- nc.ForceReconnect()
		}()
		msgs, err := sub.FetchBatch(1, nats.MaxWait(time.Second), nats.PullHeartbeat(100*time.Millisecond))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		for range msgs.Messages() {
			t.Fatalf("Expected no messages, got one")
		}
		if !errors.Is(msgs.Error(), nats.ErrFetchDisconnected) {
			t.Fatalf("Expected error: %v; got: %v", nats.ErrFetchDisconnected, msgs.Error())
		}
		if err := <-errs; err != nil {
			t.Fatalf("Error on reconnect: %v", err)
		}
	})
}

func TestJetStreamSubscribeShortTimeoutWithContext(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, nc *nats.Conn, _ *testservice.Instance) {
		// create separate JetStream context to create a stream
		js, err := nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// subscribe with MaxWait set to nanosecond
		// this should fail with context.DeadlineExceeded
		jsShort, err := nc.JetStream(nats.MaxWait(time.Nanosecond))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// no context - creating consumer should fail with js.MaxWait set to nanosecond
		_, err = jsShort.SubscribeSync("FOO.123", nats.BindStream("foo"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Expected error: %v; got: %v", context.DeadlineExceeded, err)
		}

		// use context.Background() - creating consumer should fail with js.MaxWait set to nanosecond
		_, err = jsShort.SubscribeSync("FOO.123", nats.BindStream("foo"), nats.Context(context.Background()))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Expected error: %v; got: %v", context.DeadlineExceeded, err)
		}
	})
}

func TestStreamLister(t *testing.T) {
	tests := []struct {
		name       string
		streamsNum int
	}{
		{
			name:       "single page",
			streamsNum: 5,
		},
		{
			name:       "multi page",
			streamsNum: 1025,
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				for i := range test.streamsNum {
					if _, err := js.AddStream(&nats.StreamConfig{Name: fmt.Sprintf("stream_%d", i)}); err != nil {
						t.Fatalf("Unexpected error: %v", err)
					}
				}
				names := make([]string, 0)
				for name := range js.StreamNames() {
					names = append(names, name)
				}
				if len(names) != test.streamsNum {
					t.Fatalf("Invalid number of stream names; want: %d; got: %d", test.streamsNum, len(names))
				}
				infos := make([]*nats.StreamInfo, 0)
				for info := range js.Streams() {
					infos = append(infos, info)
				}
				if len(infos) != test.streamsNum {
					t.Fatalf("Invalid number of streams; want: %d; got: %d", test.streamsNum, len(infos))
				}
				// test the deprecated StreamsInfo()
				infos = make([]*nats.StreamInfo, 0)
				for info := range js.StreamsInfo() {
					infos = append(infos, info)
				}
				if len(infos) != test.streamsNum {
					t.Fatalf("Invalid number of streams; want: %d; got: %d", test.streamsNum, len(infos))
				}
			})
		})
	}
}

func TestStreamLister_FilterSubject(t *testing.T) {
	streams := map[string][]string{
		"s1": {"foo"},
		"s2": {"bar"},
		"s3": {"foo.*", "bar.*"},
		"s4": {"foo-1.A"},
		"s5": {"foo.A.bar.B"},
		"s6": {"foo.C.bar.D.E"},
	}
	tests := []struct {
		filter   string
		expected []string
	}{
		{
			filter:   "foo",
			expected: []string{"s1"},
		},
		{
			filter:   "bar",
			expected: []string{"s2"},
		},
		{
			filter:   "*",
			expected: []string{"s1", "s2"},
		},
		{
			filter:   ">",
			expected: []string{"s1", "s2", "s3", "s4", "s5", "s6"},
		},
		{
			filter:   "*.A",
			expected: []string{"s3", "s4"},
		},
	}
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		for name, subjects := range streams {
			if _, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: subjects}); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
		}

		for _, test := range tests {
			t.Run(test.filter, func(t *testing.T) {
				names := make([]string, 0)

				// list stream names
				for name := range js.StreamNames(nats.StreamListFilter(test.filter)) {
					names = append(names, name)
				}
				if !reflect.DeepEqual(names, test.expected) {
					t.Fatalf("Invalid result; want: %v; got: %v", test.expected, names)
				}

				// list streams
				names = make([]string, 0)
				for info := range js.Streams(nats.StreamListFilter(test.filter)) {
					names = append(names, info.Config.Name)
				}
				if !reflect.DeepEqual(names, test.expected) {
					t.Fatalf("Invalid result; want: %v; got: %v", test.expected, names)
				}
			})
		}
	})
}

func TestConsumersLister(t *testing.T) {
	tests := []struct {
		name         string
		consumersNum int
	}{
		{
			name:         "single page",
			consumersNum: 5,
		},
		{
			name:         "multi page",
			consumersNum: 1025,
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				js.AddStream(&nats.StreamConfig{Name: "foo", MaxConsumers: 2000})
				for i := range test.consumersNum {
					if _, err := js.AddConsumer("foo", &nats.ConsumerConfig{Durable: fmt.Sprintf("cons_%d", i), AckPolicy: nats.AckExplicitPolicy}); err != nil {
						t.Fatalf("Unexpected error: %v", err)
					}
				}
				names := make([]string, 0)
				for name := range js.ConsumerNames("foo") {
					names = append(names, name)
				}
				if len(names) != test.consumersNum {
					t.Fatalf("Invalid number of consumer names; want: %d; got: %d", test.consumersNum, len(names))
				}
				infos := make([]*nats.ConsumerInfo, 0)
				for info := range js.Consumers("foo") {
					infos = append(infos, info)
				}
				if len(infos) != test.consumersNum {
					t.Fatalf("Invalid number of consumers; want: %d; got: %d", test.consumersNum, len(infos))
				}

				// test the deprecated ConsumersInfo()
				infos = make([]*nats.ConsumerInfo, 0)
				for info := range js.ConsumersInfo("foo") {
					infos = append(infos, info)
				}
				if len(infos) != test.consumersNum {
					t.Fatalf("Invalid number of consumers; want: %d; got: %d", test.consumersNum, len(infos))
				}
			})
		})
	}
}

func TestAccountInfo(t *testing.T) {
	type tc struct {
		name      string
		setup     func(t *testing.T) *nats.Conn
		expected  *nats.AccountInfo
		withError error
	}
	tests := []tc{
		{
			name: "server with default values",
			setup: func(t *testing.T) *nats.Conn {
				c := newTester(t)
				accounts := `accounts: {
  A {
    users: [{ user: "foo" }]
    jetstream: enabled
  }
}`
				inst := c.CreateServer(t, true,
					testservice.WithAccounts(accounts),
					testservice.WithAuthorization("no_auth_user: foo"),
					testservice.WithSystemAccount(noSystemAccountBody()),
				)
				t.Cleanup(func() { inst.Destroy(t) })
				nc := dialInstance(t, inst, nats.UserInfo("foo", ""))
				// Note: do NOT call WaitForJetStream here — it hits $JS.API.INFO
				// and would inflate the account's API.Total counter from 0 to 1,
				// breaking the equality assertion against the expected zero baseline.
				return nc
			},
			expected: &nats.AccountInfo{
				Tier: nats.Tier{
					Memory:         0,
					Store:          0,
					Streams:        0,
					Consumers:      0,
					ReservedMemory: 0,
					ReservedStore:  0,
					Limits: nats.AccountLimits{
						MaxMemory:            -1,
						MaxStore:             -1,
						MaxStreams:           -1,
						MaxConsumers:         -1,
						MaxAckPending:        -1,
						MemoryMaxStreamBytes: -1,
						StoreMaxStreamBytes:  -1,
						MaxBytesRequired:     false,
					},
				},
				API: nats.APIStats{
					Total:  0,
					Errors: 0,
					// Level is populated from the server response below; not pinned
					// because it bumps with each server release.
					Inflight: 0,
				},
			},
		},
		{
			name: "server with limits set",
			setup: func(t *testing.T) *nats.Conn {
				c := newTester(t)
				accounts := `accounts: {
  A {
    users: [{ user: "foo" }]
    jetstream: {
      max_mem: 64MB,
      max_file: 32MB,
      max_streams: 10,
      max_consumers: 20,
      max_ack_pending: 100,
      memory_max_stream_bytes: 2048,
      store_max_stream_bytes: 4096,
      max_stream_bytes: true
    }
  }
}`
				inst := c.CreateServer(t, true,
					testservice.WithJetStream(`domain: "test-domain"`),
					testservice.WithAccounts(accounts),
					testservice.WithAuthorization("no_auth_user: foo"),
					testservice.WithSystemAccount(noSystemAccountBody()),
				)
				t.Cleanup(func() { inst.Destroy(t) })
				nc := dialInstance(t, inst, nats.UserInfo("foo", ""))
				// Note: do NOT call WaitForJetStream here — it hits $JS.API.INFO
				// and would inflate the account's API.Total counter from 0 to 1,
				// breaking the equality assertion against the expected zero baseline.
				return nc
			},
			expected: &nats.AccountInfo{
				Tier: nats.Tier{
					Memory:         0,
					Store:          0,
					Streams:        0,
					Consumers:      0,
					ReservedMemory: 0,
					ReservedStore:  0,
					Limits: nats.AccountLimits{
						MaxMemory:            67108864,
						MaxStore:             33554432,
						MaxStreams:           10,
						MaxConsumers:         20,
						MaxAckPending:        100,
						MemoryMaxStreamBytes: 2048,
						StoreMaxStreamBytes:  4096,
						MaxBytesRequired:     true,
					},
				},
				Domain: "test-domain",
				API: nats.APIStats{
					Total:    0,
					Errors:   0,
					Inflight: 0,
				},
			},
		},
		{
			name: "jetstream not enabled",
			setup: func(t *testing.T) *nats.Conn {
				c := newTester(t)
				inst := c.CreateServer(t, false,
					testservice.WithAccounts(`accounts: {
  A {
    users: [{ user: "foo" }]
  }
}`),
					testservice.WithAuthorization("no_auth_user: foo"),
					testservice.WithSystemAccount(noSystemAccountBody()),
				)
				t.Cleanup(func() { inst.Destroy(t) })
				return dialInstance(t, inst, nats.UserInfo("foo", ""))
			},
			withError: nats.ErrJetStreamNotEnabled,
		},
		{
			name: "jetstream not enabled for account",
			setup: func(t *testing.T) *nats.Conn {
				c := newTester(t)
				accounts := `accounts: {
  A: {
    users: [ {user: foo} ]
  },
}`
				inst := c.CreateServer(t, true,
					testservice.WithAccounts(accounts),
					testservice.WithAuthorization("no_auth_user: foo"),
					testservice.WithSystemAccount(noSystemAccountBody()),
				)
				t.Cleanup(func() { inst.Destroy(t) })
				nc := dialInstance(t, inst, nats.UserInfo("foo", ""))
				// Wait for JS to be ready system-wide via an admin user is not possible here without $SYS;
				// instead just give the server time to start. A small sleep is okay because subsequent
				// js.AccountInfo() call has its own MaxWait.
				return nc
			},
			withError: nats.ErrJetStreamNotEnabledForAccount,
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nc := test.setup(t)
			defer nc.Close()
			js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			info, err := js.AccountInfo()
			if test.withError != nil {
				if err == nil || !errors.Is(err, test.withError) {
					t.Fatalf("Expected error: '%s'; got '%s'", test.withError, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			// API.Level is server-version-dependent; take it from the
			// actual response so the assertion below stays portable.
			test.expected.API.Level = info.API.Level

			if !reflect.DeepEqual(test.expected, info) {
				t.Fatalf("Account info does not match; expected: %+v; got: %+v", test.expected, info)
			}
			_, err = js.AddStream(&nats.StreamConfig{Name: "FOO", MaxBytes: 1024})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			_, err = js.AddConsumer("FOO", &nats.ConsumerConfig{AckPolicy: nats.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			// a total of 3 API calls is expected - get account info, create stream, create consumer
			test.expected.API.Total = 3
			test.expected.Streams = 1
			test.expected.Consumers = 1

			info, err = js.AccountInfo()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			// ignore reserved store in comparison since this is dynamically
			// assigned by the server
			info.ReservedStore = test.expected.ReservedStore

			if !reflect.DeepEqual(test.expected, info) {
				t.Fatalf("Account info does not match; expected: %+v; got: %+v", test.expected, info)
			}
		})
	}
}

func TestPurgeStream(t *testing.T) {
	testData := []nats.Msg{
		{
			Subject: "foo.A",
			Data:    []byte("first on A"),
		},
		{
			Subject: "foo.C",
			Data:    []byte("first on C"),
		},
		{
			Subject: "foo.B",
			Data:    []byte("first on B"),
		},
		{
			Subject: "foo.C",
			Data:    []byte("second on C"),
		},
	}

	tests := []struct {
		name      string
		stream    string
		req       *nats.StreamPurgeRequest
		withError error
		expected  []nats.Msg
	}{
		{
			name:     "purge all messages",
			stream:   "foo",
			expected: []nats.Msg{},
		},
		{
			name:   "with filter subject",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Subject: "foo.C",
			},
			expected: []nats.Msg{
				{
					Subject: "foo.A",
					Data:    []byte("first on A"),
				},
				{
					Subject: "foo.B",
					Data:    []byte("first on B"),
				},
			},
		},
		{
			name:   "with sequence",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Sequence: 3,
			},
			expected: []nats.Msg{
				{
					Subject: "foo.B",
					Data:    []byte("first on B"),
				},
				{
					Subject: "foo.C",
					Data:    []byte("second on C"),
				},
			},
		},
		{
			name:   "with keep",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Keep: 1,
			},
			expected: []nats.Msg{
				{
					Subject: "foo.C",
					Data:    []byte("second on C"),
				},
			},
		},
		{
			name:   "with filter and sequence",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Subject:  "foo.C",
				Sequence: 3,
			},
			expected: []nats.Msg{
				{
					Subject: "foo.A",
					Data:    []byte("first on A"),
				},
				{
					Subject: "foo.B",
					Data:    []byte("first on B"),
				},
				{
					Subject: "foo.C",
					Data:    []byte("second on C"),
				},
			},
		},
		{
			name:   "with filter and keep",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Subject: "foo.C",
				Keep:    1,
			},
			expected: []nats.Msg{
				{
					Subject: "foo.A",
					Data:    []byte("first on A"),
				},
				{
					Subject: "foo.B",
					Data:    []byte("first on B"),
				},
				{
					Subject: "foo.C",
					Data:    []byte("second on C"),
				},
			},
		},
		{
			name:   "empty stream name",
			stream: "",
			req: &nats.StreamPurgeRequest{
				Subject: "foo.C",
				Keep:    1,
			},
			withError: nats.ErrStreamNameRequired,
		},
		{
			name:   "invalid stream name",
			stream: "bad.stream.name",
			req: &nats.StreamPurgeRequest{
				Subject: "foo.C",
				Keep:    1,
			},
			withError: nats.ErrInvalidStreamName,
		},
		{
			name:   "invalid request - both sequence and keep provided",
			stream: "foo",
			req: &nats.StreamPurgeRequest{
				Sequence: 3,
				Keep:     1,
			},
			withError: nats.ErrBadRequest,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				_, err = js.AddStream(&nats.StreamConfig{
					Name:     "foo",
					Subjects: []string{"foo.A", "foo.B", "foo.C"},
				})
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				for _, msg := range testData {
					if _, err := js.PublishMsg(&msg); err != nil {
						t.Fatalf("Unexpected error during publish: %v", err)
					}
				}

				err = js.PurgeStream(test.stream, test.req)
				if test.withError != nil {
					if err == nil {
						t.Fatal("Expected error, got nil")
					}
					if !errors.Is(err, test.withError) {
						t.Fatalf("Expected error: '%s'; got '%s'", test.withError, err)
					}
					return
				}

				streamInfo, err := js.StreamInfo("foo", test.req)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				if streamInfo.State.Msgs != uint64(len(test.expected)) {
					t.Fatalf("Unexpected message count: expected %d; got: %d", len(test.expected), streamInfo.State.Msgs)
				}
				sub, err := js.SubscribeSync("foo.*", nats.BindStream("foo"))
				if err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}
				for i := range int(streamInfo.State.Msgs) {
					msg, err := sub.NextMsg(1 * time.Second)
					if err != nil {
						t.Fatalf("Unexpected error: %s", err)
					}
					if msg.Subject != test.expected[i].Subject {
						t.Fatalf("Unexpected message; subject is different than expected: want %s; got: %s", test.expected[i].Subject, msg.Subject)
					}
					if string(msg.Data) != string(test.expected[i].Data) {
						t.Fatalf("Unexpected message; data is different than expected: want %s; got: %s", test.expected[i].Data, msg.Data)
					}
				}
			})
		})
	}
}

func TestStreamInfoSubjectInfo(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "foo",
			Subjects: []string{"foo.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.Publish("foo.A", []byte("")); err != nil {
			t.Fatalf("Unexpected error during publish: %v", err)
		}
		if _, err := js.Publish("foo.B", []byte("")); err != nil {
			t.Fatalf("Unexpected error during publish: %v", err)
		}

		si, err := js.StreamInfo("foo", &nats.StreamInfoRequest{
			SubjectsFilter: "foo.A",
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si.State.NumSubjects != 2 {
			t.Fatal("Expected NumSubjects to be 1")
		}
		if len(si.State.Subjects) != 1 {
			t.Fatal("Expected Subjects len to be 1")
		}
		if si.State.Subjects["foo.A"] != 1 {
			t.Fatal("Expected Subjects to have an entry for foo.A with a count of 1")
		}
	})
}

func TestStreamInfoDeletedDetails(t *testing.T) {
	testData := []string{"one", "two", "three", "four"}

	tests := []struct {
		name                   string
		stream                 string
		req                    *nats.StreamInfoRequest
		withError              error
		expectedDeletedDetails []uint64
	}{
		{
			name:   "empty request body",
			stream: "foo",
		},
		{
			name:   "with deleted details",
			stream: "foo",
			req: &nats.StreamInfoRequest{
				DeletedDetails: true,
			},
			expectedDeletedDetails: []uint64{2, 4},
		},
		{
			name:   "with deleted details set to false",
			stream: "foo",
			req: &nats.StreamInfoRequest{
				DeletedDetails: false,
			},
		},
		{
			name:      "empty stream name",
			stream:    "",
			withError: nats.ErrStreamNameRequired,
		},
		{
			name:      "invalid stream name",
			stream:    "bad.stream.name",
			withError: nats.ErrInvalidStreamName,
		},
		{
			name:      "stream not found",
			stream:    "bar",
			withError: nats.ErrStreamNotFound,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				_, err = js.AddStream(&nats.StreamConfig{
					Name:     "foo",
					Subjects: []string{"foo.A"},
				})
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				for _, msg := range testData {
					if _, err := js.Publish("foo.A", []byte(msg)); err != nil {
						t.Fatalf("Unexpected error during publish: %v", err)
					}
				}
				if err := js.DeleteMsg("foo", 2); err != nil {
					t.Fatalf("Unexpected error while deleting message from stream: %v", err)
				}
				if err := js.DeleteMsg("foo", 4); err != nil {
					t.Fatalf("Unexpected error while deleting message from stream: %v", err)
				}

				var streamInfo *nats.StreamInfo
				if test.req != nil {
					streamInfo, err = js.StreamInfo(test.stream, test.req)
				} else {
					streamInfo, err = js.StreamInfo(test.stream)
				}
				if test.withError != nil {
					if err == nil {
						t.Fatal("Expected error, got nil")
					}
					if !errors.Is(err, test.withError) {
						t.Fatalf("Expected error: '%s'; got '%s'", test.withError, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				if streamInfo.Config.Name != "foo" {
					t.Fatalf("Invalid stream name in StreamInfo response: want: 'foo'; got: '%s'", streamInfo.Config.Name)
				}
				if streamInfo.State.NumDeleted != 2 {
					t.Fatalf("Invalid value for num_deleted in state: want: 2; got: %d", streamInfo.State.NumDeleted)
				}
				if !reflect.DeepEqual(test.expectedDeletedDetails, streamInfo.State.Deleted) {
					t.Fatalf("Invalid value for deleted msgs in state: want: %v; got: %v", test.expectedDeletedDetails, streamInfo.State.Deleted)
				}
			})
		})
	}
}

// testJetStreamManagement_GetMsgBody is the shared body used by both the
// 1-node and 3-node subtests of TestJetStreamManagement_GetMsg.
func testJetStreamManagement_GetMsgBody(t *testing.T, nc *nats.Conn) {
	t.Helper()
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	_, err = js.AddStream(&nats.StreamConfig{
		Name:     "foo",
		Subjects: []string{"foo.A", "foo.B", "foo.C"},
	})
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	for i := range 5 {
		msg := nats.NewMsg("foo.A")
		data := fmt.Sprintf("A:%d", i)
		msg.Data = []byte(data)
		msg.Header = nats.Header{
			"X-NATS-Key": []string{"123"},
		}
		msg.Header.Add("X-Nats-Test-Data", data)
		js.PublishMsg(msg)
		js.Publish("foo.B", []byte(fmt.Sprintf("B:%d", i)))
		js.Publish("foo.C", []byte(fmt.Sprintf("C:%d", i)))
	}

	var originalSeq uint64
	t.Run("get message", func(t *testing.T) {
		expected := 5
		msgs := make([]*nats.Msg, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err := js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)
			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		got := len(msgs)
		if got != expected {
			t.Fatalf("Expected: %d, got: %d", expected, got)
		}

		msg := msgs[3]
		meta, err := msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		originalSeq = meta.Sequence.Stream

		// Get the same message using JSM.
		fetchedMsg, err := js.GetMsg("foo", originalSeq)
		if err != nil {
			t.Fatal(err)
		}

		expectedData := "C:3"
		if string(fetchedMsg.Data) != expectedData {
			t.Errorf("Expected: %v, got: %v", expectedData, string(fetchedMsg.Data))
		}
	})

	t.Run("get deleted message", func(t *testing.T) {
		err := js.DeleteMsg("foo", originalSeq)
		if err != nil {
			t.Fatal(err)
		}

		si, err := js.StreamInfo("foo")
		if err != nil {
			t.Fatal(err)
		}
		expected := 14
		if int(si.State.Msgs) != expected {
			t.Errorf("Expected %d msgs, got: %d", expected, si.State.Msgs)
		}

		// There should be only 4 messages since one deleted.
		expected = 4
		msgs := make([]*nats.Msg, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err := js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)

			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		msg := msgs[3]
		meta, err := msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		newSeq := meta.Sequence.Stream

		// First message removed
		if newSeq <= originalSeq {
			t.Errorf("Expected %d to be higher sequence than %d",
				newSeq, originalSeq)
		}

		// Try to fetch the same message which should be gone.
		_, err = js.GetMsg("foo", originalSeq)
		if err == nil || err != nats.ErrMsgNotFound {
			t.Errorf("Expected no message found error, got: %v", err)
		}
	})

	t.Run("get message with headers", func(t *testing.T) {
		streamMsg, err := js.GetMsg("foo", 4)
		if err != nil {
			t.Fatal(err)
		}
		if streamMsg.Sequence != 4 {
			t.Errorf("Expected %v, got: %v", 4, streamMsg.Sequence)
		}
		expectedMap := map[string][]string{
			"X-Nats-Test-Data": {"A:1"},
			"X-NATS-Key":       {"123"},
		}
		if !reflect.DeepEqual(streamMsg.Header, nats.Header(expectedMap)) {
			t.Errorf("Expected %v, got: %v", expectedMap, streamMsg.Header)
		}

		sub, err := js.SubscribeSync("foo.A", nats.StartSequence(4))
		if err != nil {
			t.Fatal(err)
		}
		msg, err := sub.NextMsg(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(msg.Header, nats.Header(expectedMap)) {
			t.Errorf("Expected %v, got: %v", expectedMap, msg.Header)
		}
	})
}

func TestJetStreamManagement_GetMsg(t *testing.T) {
	t.Run("1-node", func(t *testing.T) {
		withJSServer(t, testJetStreamManagement_GetMsgBody)
	})
	t.Run("3-node", func(t *testing.T) {
		c := newTester(t)
		inst := c.CreateCluster(t, 3, true)
		t.Cleanup(func() { inst.Destroy(t) })
		nc := dialInstance(t, inst)
		c.WaitForJetStream(t, nc)
		waitForJSCluster(t, nc)
		testJetStreamManagement_GetMsgBody(t, nc)
	})
}

func TestJetStreamManagement_DeleteMsg(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "foo",
			Subjects: []string{"foo.A", "foo.B", "foo.C"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for range 5 {
			js.Publish("foo.A", []byte("A"))
			js.Publish("foo.B", []byte("B"))
			js.Publish("foo.C", []byte("C"))
		}

		si, err := js.StreamInfo("foo")
		if err != nil {
			t.Fatal(err)
		}
		var total uint64 = 15
		if si.State.Msgs != total {
			t.Errorf("Expected %d msgs, got: %d", total, si.State.Msgs)
		}

		expected := 5
		msgs := make([]*nats.Msg, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err := js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)
			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		got := len(msgs)
		if got != expected {
			t.Fatalf("Expected %d, got %d", expected, got)
		}

		msg := msgs[0]
		meta, err := msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		originalSeq := meta.Sequence.Stream

		// create a subscription on delete message API subject to verify the content of delete operation
		apiSub, err := nc.SubscribeSync("$JS.API.STREAM.MSG.DELETE.foo")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		err = js.DeleteMsg("foo", originalSeq)
		if err != nil {
			t.Fatal(err)
		}
		msg, err = apiSub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if str := string(msg.Data); !strings.Contains(str, "no_erase\":true") {
			t.Fatalf("Request should not have no_erase field set: %s", str)
		}

		si, err = js.StreamInfo("foo")
		if err != nil {
			t.Fatal(err)
		}
		total = 14
		if si.State.Msgs != total {
			t.Errorf("Expected %d msgs, got: %d", total, si.State.Msgs)
		}

		// There should be only 4 messages since one deleted.
		expected = 4
		msgs = make([]*nats.Msg, 0)
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err = js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)

			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		msg = msgs[0]
		meta, err = msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		newSeq := meta.Sequence.Stream

		// First message removed
		if newSeq <= originalSeq {
			t.Errorf("Expected %d to be higher sequence than %d", newSeq, originalSeq)
		}
	})
}

func TestJetStreamManagement_SecureDeleteMsg(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "foo",
			Subjects: []string{"foo.A", "foo.B", "foo.C"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for range 5 {
			js.Publish("foo.A", []byte("A"))
			js.Publish("foo.B", []byte("B"))
			js.Publish("foo.C", []byte("C"))
		}

		si, err := js.StreamInfo("foo")
		if err != nil {
			t.Fatal(err)
		}
		var total uint64 = 15
		if si.State.Msgs != total {
			t.Errorf("Expected %d msgs, got: %d", total, si.State.Msgs)
		}

		expected := 5
		msgs := make([]*nats.Msg, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err := js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)
			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		got := len(msgs)
		if got != expected {
			t.Fatalf("Expected %d, got %d", expected, got)
		}

		msg := msgs[0]
		meta, err := msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		originalSeq := meta.Sequence.Stream

		// create a subscription on delete message API subject to verify the content of delete operation
		apiSub, err := nc.SubscribeSync("$JS.API.STREAM.MSG.DELETE.foo")
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		err = js.SecureDeleteMsg("foo", originalSeq)
		if err != nil {
			t.Fatal(err)
		}
		msg, err = apiSub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if str := string(msg.Data); strings.Contains(str, "no_erase\":true") {
			t.Fatalf("Request should not have no_erase field set: %s", str)
		}

		si, err = js.StreamInfo("foo")
		if err != nil {
			t.Fatal(err)
		}
		total = 14
		if si.State.Msgs != total {
			t.Errorf("Expected %d msgs, got: %d", total, si.State.Msgs)
		}

		// There should be only 4 messages since one deleted.
		expected = 4
		msgs = make([]*nats.Msg, 0)
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		sub, err = js.Subscribe("foo.C", func(msg *nats.Msg) {
			msgs = append(msgs, msg)

			if len(msgs) == expected {
				cancel()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		sub.Unsubscribe()

		msg = msgs[0]
		meta, err = msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		newSeq := meta.Sequence.Stream

		// First message removed
		if newSeq <= originalSeq {
			t.Errorf("Expected %d to be higher sequence than %d", newSeq, originalSeq)
		}
	})
}

func TestJetStreamImport(t *testing.T) {
	c := newTester(t)
	accounts := `accounts: {
  JS: {
    jetstream: enabled
    users: [ {user: dlc, password: foo} ]
    exports [ { service: "$JS.API.>" },  { service: "foo" }]
  },
  U: {
    users: [ {user: rip, password: bar} ]
    imports [
      { service: { subject: "$JS.API.>", account: JS } , to: "dlc.>" }
      { service: { subject: "foo", account: JS } }
    ]
  },
}`
	inst := c.CreateServer(t, true,
		testservice.WithAccounts(accounts),
		testservice.WithAuthorization("no_auth_user: rip"),
		testservice.WithSystemAccount(noSystemAccountBody()),
	)
	t.Cleanup(func() { inst.Destroy(t) })

	// Create a stream using JSM.
	ncm := dialInstance(t, inst, nats.UserInfo("dlc", "foo"))
	c.WaitForJetStream(t, ncm)
	defer ncm.Close()
	jsm, err := ncm.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	_, err = jsm.AddStream(&nats.StreamConfig{
		Name:     "TEST",
		Subjects: []string{"foo", "bar"},
	})
	if err != nil {
		t.Fatalf("stream create failed: %v", err)
	}

	// Client with the imports.
	nc := dialInstance(t, inst, nats.UserInfo("rip", "bar"))
	defer nc.Close()

	// Since we import with a prefix from above we can use that when creating our JS context.
	js, err := nc.JetStream(nats.APIPrefix("dlc"))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	msg := []byte("Hello JS Import!")

	if _, err = js.Publish("foo", msg); err != nil {
		t.Fatalf("Unexpected publish error: %v", err)
	}
}

func TestJetStreamImportDirectOnly(t *testing.T) {
	c := newTester(t)
	accounts := `accounts: {
  JS: {
    jetstream: enabled
    users: [ {user: dlc, password: foo} ]
    exports [
      # For now have to expose the API to enable JS context across account.
      { service: "$JS.API.INFO" }
      # For the stream publish.
      { service: "ORDERS" }
      # For the pull based consumer. Response type needed for batchsize > 1
      { service: "$JS.API.CONSUMER.INFO.ORDERS.d1", response: stream }
      { service: "$JS.API.CONSUMER.MSG.NEXT.ORDERS.d1", response: stream }
      # For the push based consumer delivery and ack.
      { stream: "p.d" }
      { stream: "p.d3" }
      # For the acks. Service in case we want an ack to our ack.
      { service: "$JS.ACK.ORDERS.*.>" }
      { service: "$JS.ACK.*.*.ORDERS.*.>" }

      # Allow lookup of stream to be able to bind from another account.
      { service: "$JS.API.CONSUMER.INFO.ORDERS.d4", response: stream }
      { stream: "p.d4" }
    ]
  },
  U: {
    users: [ { user: rip, password: bar } ]
    imports [
      { service: { subject: "$JS.API.INFO", account: JS } }
      { service: { subject: "ORDERS", account: JS } , to: "orders" }
      # { service: { subject: "$JS.API.CONSUMER.INFO.ORDERS.d1", account: JS } }
      { service: { subject: "$JS.API.CONSUMER.INFO.ORDERS.d4", account: JS } }
      { service: { subject: "$JS.API.CONSUMER.MSG.NEXT.ORDERS.d1", account: JS } }
      { stream:  { subject: "p.d", account: JS } }
      { stream:  { subject: "p.d3", account: JS } }
      { stream:  { subject: "p.d4", account: JS } }
      { service: { subject: "$JS.ACK.ORDERS.*.>", account: JS } }
      { service: { subject: "$JS.ACK.*.*.ORDERS.*.>", account: JS } }
    ]
  },
  V: {
    users: [ {
      user: v,
      password: quux,
      permissions: { publish: {deny: ["$JS.API.CONSUMER.INFO.ORDERS.d1"]} }
    } ]
    imports [
      { service: { subject: "$JS.API.INFO", account: JS } }
      { service: { subject: "ORDERS", account: JS } , to: "orders" }
      { service: { subject: "$JS.API.CONSUMER.INFO.ORDERS.d1", account: JS } }
      { service: { subject: "$JS.API.CONSUMER.INFO.ORDERS.d4", account: JS } }
      { service: { subject: "$JS.API.CONSUMER.MSG.NEXT.ORDERS.d1", account: JS } }
      { stream:  { subject: "p.d", account: JS } }
      { stream:  { subject: "p.d3", account: JS } }
      { stream:  { subject: "p.d4", account: JS } }
      { service: { subject: "$JS.ACK.ORDERS.*.>", account: JS } }
      { service: { subject: "$JS.ACK.*.*.ORDERS.*.>", account: JS } }
    ]
  },
}`
	inst := c.CreateServer(t, true,
		testservice.WithAccounts(accounts),
		testservice.WithAuthorization("no_auth_user: rip"),
		testservice.WithSystemAccount(noSystemAccountBody()),
	)
	t.Cleanup(func() { inst.Destroy(t) })

	// Create a stream using JSM.
	ncm := dialInstance(t, inst, nats.UserInfo("dlc", "foo"))
	c.WaitForJetStream(t, ncm)
	defer ncm.Close()
	jsm, err := ncm.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	// Create a stream using the server directly.
	_, err = jsm.AddStream(&nats.StreamConfig{Name: "ORDERS"})
	if err != nil {
		t.Fatalf("stream create failed: %v", err)
	}

	// Create a pull based consumer.
	_, err = jsm.AddConsumer("ORDERS", &nats.ConsumerConfig{Durable: "d1", AckPolicy: nats.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("pull consumer create failed: %v", err)
	}

	// Create a push based consumers.
	_, err = jsm.AddConsumer("ORDERS", &nats.ConsumerConfig{
		Durable:        "d2",
		AckPolicy:      nats.AckExplicitPolicy,
		DeliverSubject: "p.d",
	})
	if err != nil {
		t.Fatalf("push consumer create failed: %v", err)
	}

	_, err = jsm.AddConsumer("ORDERS", &nats.ConsumerConfig{
		Durable:        "d3",
		AckPolicy:      nats.AckExplicitPolicy,
		DeliverSubject: "p.d3",
	})
	if err != nil {
		t.Fatalf("push consumer create failed: %v", err)
	}

	_, err = jsm.AddConsumer("ORDERS", &nats.ConsumerConfig{
		Durable:        "d4",
		AckPolicy:      nats.AckExplicitPolicy,
		DeliverSubject: "p.d4",
	})
	if err != nil {
		t.Fatalf("push consumer create failed: %v", err)
	}

	nc := dialInstance(t, inst, nats.UserInfo("rip", "bar"))
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	// Now make sure we can send to the stream from another account.
	toSend := 100
	for i := range toSend {
		if _, err := js.Publish("orders", []byte(fmt.Sprintf("ORDER-%d", i+1))); err != nil {
			t.Fatalf("Unexpected error publishing message %d: %v", i+1, err)
		}
	}

	var sub *nats.Subscription

	waitForPending := func(t *testing.T, n int) {
		t.Helper()
		timeout := time.Now().Add(2 * time.Second)
		for time.Now().Before(timeout) {
			if msgs, _, _ := sub.Pending(); msgs == n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		msgs, _, _ := sub.Pending()
		t.Fatalf("Expected to receive %d messages, but got %d", n, msgs)
	}

	// Do push based consumer using a regular NATS subscription on the import subject.
	sub, err = nc.SubscribeSync("p.d3")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	waitForPending(t, toSend)

	// Can also ack from the regular NATS subscription via the imported subject.
	for range toSend {
		m, err := sub.NextMsg(100 * time.Millisecond)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Test that can expect an ack of the ack.
		err = m.AckSync()
		if err != nil {
			t.Errorf("Unexpected error: %v", err)
		}
	}

	// Can attach to the consumer from another JS account if there is a durable name.
	sub, err = js.SubscribeSync("ORDERS", nats.Durable("d4"), nats.BindStream("ORDERS"))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	waitForPending(t, toSend)

	// Even if there are no permissions or import to check that a consumer exists,
	// it is still possible to bind subscription to it.
	sub, err = js.PullSubscribe("ORDERS", "d1", nats.Bind("ORDERS", "d1"))
	if err != nil {
		t.Fatal(err)
	}
	expected := 10
	msgs, err := sub.Fetch(expected)
	if err != nil {
		t.Fatal(err)
	}
	got := len(msgs)
	if got != expected {
		t.Fatalf("Expected %d, got %d", expected, got)
	}

	// Account without permissions to lookup should be able to bind as well.
	eh := func(_ *nats.Conn, _ *nats.Subscription, err error) {}
	ncV := dialInstance(t, inst, nats.UserInfo("v", "quux"), nats.ErrorHandler(eh))
	defer ncV.Close()

	// Since we know that the lookup will fail, we use a smaller timeout than the 5s default.
	jsV, err := ncV.JetStream(nats.MaxWait(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	sub, err = jsV.PullSubscribe("ORDERS", "d1", nats.Bind("ORDERS", "d1"))
	if err != nil {
		t.Fatal(err)
	}
	expected = 10
	msgs, err = sub.Fetch(expected)
	if err != nil {
		t.Fatal(err)
	}
	got = len(msgs)
	if got != expected {
		t.Fatalf("Expected %d, got %d", expected, got)
	}
}

func TestJetStreamCrossAccountMirrorsAndSources(t *testing.T) {
	c := newTester(t)
	accounts := `accounts {
  JS {
    jetstream: enabled
    users = [ { user: "rip", pass: "pass" } ]
    exports [
      { service: "$JS.API.CONSUMER.>" } # To create internal consumers to mirror/source.
      { stream: "RI.DELIVER.SYNC.>" }   # For the mirror/source consumers sending to IA via delivery subject.
    ]
  }
  IA {
    jetstream: enabled
    users = [ { user: "dlc", pass: "pass" } ]
    imports [
      { service: { account: JS, subject: "$JS.API.CONSUMER.>"}, to: "RI.JS.API.CONSUMER.>" }
      { stream: { account: JS, subject: "RI.DELIVER.SYNC.>"} }
    ]
  }
  $SYS { users = [ { user: "admin", pass: "s3cr3t!" } ] }
}`
	inst := c.CreateServer(t, true,
		testservice.WithAccounts(accounts),
		testservice.WithAuthorization("no_auth_user: rip"),
		testservice.WithSystemAccount(`system_account: "$SYS"`),
	)
	t.Cleanup(func() { inst.Destroy(t) })

	nc1 := dialInstance(t, inst, nats.UserInfo("rip", "pass"))
	c.WaitForJetStream(t, nc1)
	defer nc1.Close()
	js1, err := nc1.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	_, err = js1.AddStream(&nats.StreamConfig{
		Name:     "TEST",
		Replicas: 1,
	})
	if err != nil {
		t.Fatal(err)
	}

	const (
		toSend      = 100
		publishSubj = "TEST"
		sourceName  = "MY_SOURCE_TEST"
		mirrorName  = "MY_MIRROR_TEST"
	)
	for i := range toSend {
		data := []byte(fmt.Sprintf("OK %d", i))
		if _, err := js1.Publish(publishSubj, data); err != nil {
			t.Fatalf("Unexpected publish error: %v", err)
		}
	}

	nc2 := dialInstance(t, inst, nats.UserInfo("dlc", "pass"))
	defer nc2.Close()
	js2, err := nc2.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	checkMsgCount := func(t *testing.T, stream string) {
		t.Helper()
		checkFor(t, 20*time.Second, 100*time.Millisecond, func() error {
			si, err := js2.StreamInfo(stream)
			if err != nil {
				return err
			}
			if si.State.Msgs != uint64(toSend) {
				return fmt.Errorf("Expected %d msgs, got state: %+v", toSend, si.State)
			}
			return nil
		})
	}
	checkConsume := func(t *testing.T, js nats.JetStream, subject, stream string, want int) {
		t.Helper()
		sub, err := js.SubscribeSync(subject, nats.BindStream(stream))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		checkFor(t, 4*time.Second, 20*time.Millisecond, func() error {
			if nmsgs, _, err := sub.Pending(); err != nil || nmsgs != want {
				return fmt.Errorf("Did not receive correct number of messages: %d vs %d", nmsgs, want)
			}
			return nil
		})

		for range want {
			msg, err := sub.NextMsg(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			meta, err := msg.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := meta.Stream, stream; got != want {
				t.Fatalf("unexpected stream name, got=%q, want=%q", got, want)
			}
		}
	}

	_, err = js2.AddStream(&nats.StreamConfig{
		Name:    mirrorName,
		Storage: nats.FileStorage,
		Mirror: &nats.StreamSource{
			Name: publishSubj,
			External: &nats.ExternalStream{
				APIPrefix:     "RI.JS.API",
				DeliverPrefix: "RI.DELIVER.SYNC.MIRRORS",
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkMsgCount(t, mirrorName)
	checkConsume(t, js2, publishSubj, mirrorName, toSend)

	_, err = js2.AddStream(&nats.StreamConfig{
		Name:    sourceName,
		Storage: nats.FileStorage,
		Sources: []*nats.StreamSource{
			{
				Name: publishSubj,
				External: &nats.ExternalStream{
					APIPrefix:     "RI.JS.API",
					DeliverPrefix: "RI.DELIVER.SYNC.SOURCES",
				},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkMsgCount(t, sourceName)
	checkConsume(t, js2, publishSubj, sourceName, toSend)
}

func TestJetStreamAutoMaxAckPending(t *testing.T) {
	c := newTester(t)
	inst := c.CreateServer(t, true)
	t.Cleanup(func() { inst.Destroy(t) })
	nc := dialInstance(t, inst, nats.SyncQueueLen(500))
	c.WaitForJetStream(t, nc)
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	_, err = js.AddStream(&nats.StreamConfig{Name: "foo"})
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	toSend := 10_000

	msg := []byte("Hello")
	for range toSend {
		// Use plain NATS here for speed.
		nc.Publish("foo", msg)
	}
	nc.Flush()

	// Create a consumer.
	sub, err := js.SubscribeSync("foo")
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	defer sub.Unsubscribe()
	expectedMaxAck, _, _ := sub.PendingLimits()

	ci, err := sub.ConsumerInfo()
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	if ci.Config.MaxAckPending != expectedMaxAck {
		t.Fatalf("Expected MaxAckPending to be set to %d, got %d", expectedMaxAck, ci.Config.MaxAckPending)
	}

	waitForPending := func(n int) {
		timeout := time.Now().Add(2 * time.Second)
		for time.Now().Before(timeout) {
			if msgs, _, _ := sub.Pending(); msgs == n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		msgs, _, _ := sub.Pending()
		t.Fatalf("Expected to receive %d messages, but got %d", n, msgs)
	}

	waitForPending(expectedMaxAck)
	// We do it twice to make sure it does not go over.
	waitForPending(expectedMaxAck)

	// Now make sure we can consume them all with no slow consumers etc.
	for i := range toSend {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Unexpected error receiving %d: %v", i+1, err)
		}
		m.Ack()
	}
}

func TestJetStreamInterfaces(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		var jsm nats.JetStreamManager
		var jsctx nats.JetStreamContext

		// JetStream that can publish/subscribe but cannot manage streams.
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		js.Publish("foo", []byte("hello"))

		// JetStream context that can manage streams/consumers but cannot produce messages.
		jsm, err = nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		jsm.AddStream(&nats.StreamConfig{Name: "FOO"})

		// JetStream context that can both manage streams/consumers
		// as well as publish/subscribe.
		jsctx, err = nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		jsctx.AddStream(&nats.StreamConfig{Name: "BAR"})
		jsctx.Publish("bar", []byte("hello world"))

		publishMsg := func(js nats.JetStream, payload []byte) {
			js.Publish("foo", payload)
		}
		publishMsg(js, []byte("hello world"))
	})
}

func TestJetStreamSubscribe_DeliverPolicy(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo", "bar"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		var publishTime time.Time

		for i := range 10 {
			payload := fmt.Sprintf("i:%d", i)
			if i == 5 {
				// Derive publishTime from the SERVER's own clock by reading
				// the stream's LastTime (server-side timestamp of msg 4),
				// then add 1ns. Using host's time.Now() here is unreliable
				// when the testservice server runs in a docker container
				// whose clock can drift slightly relative to the host.
				si, err := js.StreamInfo("TEST")
				if err != nil {
					t.Fatalf("StreamInfo: %v", err)
				}
				publishTime = si.State.LastTime.Add(time.Nanosecond)
			}
			js.Publish("foo", []byte(payload))
			time.Sleep(15 * time.Millisecond)
		}

		for _, test := range []struct {
			name     string
			subopt   nats.SubOpt
			expected int
		}{
			{
				"deliver.all", nats.DeliverAll(), 10,
			},
			{
				"deliver.last", nats.DeliverLast(), 1,
			},
			{
				"deliver.new", nats.DeliverNew(), 0,
			},
			{
				"deliver.starttime", nats.StartTime(publishTime), 5,
			},
			{
				"deliver.startseq", nats.StartSequence(6), 5,
			},
		} {
			test := test
			t.Run(test.name, func(t *testing.T) {
				timeout := 2 * time.Second
				if test.expected == 0 {
					timeout = 250 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()

				got := 0
				sub, err := js.Subscribe("foo", func(m *nats.Msg) {
					got++
					if got == test.expected {
						cancel()
					}
				}, test.subopt)

				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				<-ctx.Done()
				sub.Drain()

				if got != test.expected {
					t.Fatalf("Expected %d, got %d", test.expected, got)
				}
			})
		}

		js.Publish("bar", []byte("bar msg 1"))
		js.Publish("bar", []byte("bar msg 2"))

		sub, err := js.SubscribeSync("bar", nats.BindStream("TEST"), nats.DeliverLastPerSubject())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Error on next msg: %v", err)
		}
		if string(msg.Data) != "bar msg 2" {
			t.Fatalf("Unexpected last message: %q", msg.Data)
		}
	})
}

func TestJetStreamSubscribe_AckPolicy(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo", "bar"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for i := range 10 {
			payload := fmt.Sprintf("i:%d", i)
			js.Publish("foo", []byte(payload))
		}

		for _, test := range []struct {
			name     string
			subopt   nats.SubOpt
			expected nats.AckPolicy
		}{
			{
				"ack-none", nats.AckNone(), nats.AckNonePolicy,
			},
			{
				"ack-all", nats.AckAll(), nats.AckAllPolicy,
			},
			{
				"ack-explicit", nats.AckExplicit(), nats.AckExplicitPolicy,
			},
		} {
			test := test
			t.Run(test.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()

				got := 0
				totalMsgs := 10
				sub, err := js.Subscribe("foo", func(m *nats.Msg) {
					got++
					if got == totalMsgs {
						cancel()
					}
				}, test.subopt, nats.Durable(test.name))

				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				<-ctx.Done()
				if got != totalMsgs {
					t.Fatalf("Expected %d, got %d", totalMsgs, got)
				}

				// check if consumer is configured properly
				ci, err := js.ConsumerInfo("TEST", test.name)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				if ci.Config.AckPolicy != test.expected {
					t.Fatalf("Expected %v, got %v", test.expected, ci.Config.AckPolicy)
				}

				// drain the subscription. This will remove the consumer
				sub.Drain()
			})
		}

		checkAcks := func(t *testing.T, sub *nats.Subscription) {
			// Normal Ack
			msg, err := sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			meta, err := msg.Metadata()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			if meta.Sequence.Consumer != 1 || meta.Sequence.Stream != 1 || meta.NumDelivered != 1 {
				t.Errorf("Unexpected metadata: %v", meta)
			}

			got := string(msg.Data)
			expected := "i:0"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
			err = msg.Ack()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			// AckSync
			msg, err = sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:1"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}

			// Give an already canceled context.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()

			err = msg.AckSync(nats.Context(ctx))
			if err != context.Canceled {
				t.Errorf("Unexpected error: %v", err)
			}

			// Context that not yet canceled.
			ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()

			// Prevent double context and ack wait options.
			err = msg.AckSync(nats.Context(ctx), nats.AckWait(1*time.Second))
			if err != nats.ErrContextAndTimeout {
				t.Errorf("Unexpected error: %v", err)
			}

			err = msg.AckSync(nats.Context(ctx))
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			err = msg.AckSync(nats.AckWait(2 * time.Second))
			if err != nats.ErrMsgAlreadyAckd {
				t.Errorf("Unexpected error: %v", err)
			}

			// AckSync default
			msg, err = sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:2"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
			err = msg.AckSync()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			// Nak
			msg, err = sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:3"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}

			// Prevent double context and ack wait options.
			err = msg.Nak(nats.Context(ctx), nats.AckWait(1*time.Second))
			if err != nats.ErrContextAndTimeout {
				t.Errorf("Unexpected error: %v", err)
			}

			// Skip the message.
			err = msg.Nak()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			msg, err = sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:4"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
			err = msg.Nak(nats.AckWait(2 * time.Second))
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			msg, err = sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:5"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}

			// Prevent double context and ack wait options.
			err = msg.Term(nats.Context(ctx), nats.AckWait(1*time.Second))
			if err != nats.ErrContextAndTimeout {
				t.Errorf("Unexpected error: %v", err)
			}

			err = msg.Term()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			ctx, done := context.WithTimeout(context.Background(), 2*time.Second)
			defer done()

			// Convert context into nats option.
			nctx := nats.Context(ctx)
			msg, err = sub.NextMsgWithContext(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:6"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
			err = msg.Term(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			msg, err = sub.NextMsgWithContext(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			got = string(msg.Data)
			expected = "i:7"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}

			// Prevent double context and ack wait options.
			err = msg.InProgress(nats.Context(ctx), nats.AckWait(1*time.Second))
			if err != nats.ErrContextAndTimeout {
				t.Errorf("Unexpected error: %v", err)
			}

			err = msg.InProgress(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			err = msg.InProgress(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			err = msg.Ack(nctx)
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
		}

		t.Run("js sub ack", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo", nats.Durable("wq2"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			checkAcks(t, sub)
		})

		t.Run("non js sub ack", func(t *testing.T) {
			inbox := nats.NewInbox()
			_, err = js.AddConsumer("TEST", &nats.ConsumerConfig{
				Durable:        "wq",
				AckPolicy:      nats.AckExplicitPolicy,
				DeliverPolicy:  nats.DeliverAllPolicy,
				DeliverSubject: inbox,
			})
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			sub, err := nc.SubscribeSync(inbox)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			checkAcks(t, sub)
		})

		t.Run("Nak with delay", func(t *testing.T) {
			js.Publish("bar", []byte("msg"))
			sub, err := js.SubscribeSync("bar", nats.Durable("nak_dur"))
			if err != nil {
				t.Fatalf("Error on subscribe: %v", err)
			}
			msg, err := sub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on NextMsg: %v", err)
			}
			if err := msg.NakWithDelay(500 * time.Millisecond); err != nil {
				t.Fatalf("Error on Nak: %v", err)
			}
			// We should not get redelivery before 500ms+
			if _, err = sub.NextMsg(250 * time.Millisecond); err != nats.ErrTimeout {
				t.Fatalf("Expected timeout, got %v", err)
			}
			msg, err = sub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on NextMsg: %v", err)
			}
			if err := msg.NakWithDelay(0); err != nil {
				t.Fatalf("Error on Nak: %v", err)
			}
			msg, err = sub.NextMsg(250 * time.Millisecond)
			if err != nil {
				t.Fatalf("Expected timeout, got %v", err)
			}
			msg.Ack()
		})

		t.Run("BackOff redeliveries", func(t *testing.T) {
			inbox := nats.NewInbox()
			sub, err := nc.SubscribeSync(inbox)
			if err != nil {
				t.Fatalf("Error on subscribe: %v", err)
			}
			defer sub.Unsubscribe()
			cc := nats.ConsumerConfig{
				Durable:        "backoff",
				AckPolicy:      nats.AckExplicitPolicy,
				DeliverPolicy:  nats.DeliverAllPolicy,
				FilterSubject:  "bar",
				DeliverSubject: inbox,
				BackOff:        []time.Duration{50 * time.Millisecond, 250 * time.Millisecond},
			}
			// First, try with a MaxDeliver that is < len(BackOff), which the
			// server should reject.
			cc.MaxDeliver = 1
			_, err = js.AddConsumer("TEST", &cc)
			if err == nil || !strings.Contains(err.Error(), "max deliver is required to be > length of backoff values") {
				t.Fatalf("Expected backoff/max deliver error, got %v", err)
			}
			// Now put a valid value
			cc.MaxDeliver = 4
			ci, err := js.AddConsumer("TEST", &cc)
			if err != nil {
				t.Fatalf("Error on add consumer: %v", err)
			}
			if !reflect.DeepEqual(ci.Config.BackOff, cc.BackOff) {
				t.Fatalf("Expected backoff to be %v, got %v", cc.BackOff, ci.Config.BackOff)
			}
			// Consume the first delivery
			_, err = sub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on nextMsg: %v", err)
			}
			// We should get a redelivery at around 50ms
			start := time.Now()
			_, err = sub.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on nextMsg: %v", err)
			}
			if dur := time.Since(start); dur < 25*time.Millisecond || dur > 100*time.Millisecond {
				t.Fatalf("Expected to be redelivered at around 50ms, took %v", dur)
			}
			// Now it should be every 250ms or so
			for i := range 2 {
				start = time.Now()
				_, err = sub.NextMsg(time.Second)
				if err != nil {
					t.Fatalf("Error on nextMsg for iter=%v: %v", i+1, err)
				}
				if dur := time.Since(start); dur < 200*time.Millisecond || dur > 300*time.Millisecond {
					t.Fatalf("Expected to be redelivered at around 250ms, took %v", dur)
				}
			}
			// At this point, we should have go reach MaxDeliver
			_, err = sub.NextMsg(300 * time.Millisecond)
			if err != nats.ErrTimeout {
				t.Fatalf("Expected timeout, got %v", err)
			}
		})
	})
}

func TestJetStreamPullSubscribe_AckPending(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		const totalMsgs = 10
		for i := range totalMsgs {
			payload := fmt.Sprintf("i:%d", i)
			js.Publish("foo", []byte(payload))
		}

		sub, err := js.PullSubscribe("foo", "wq",
			nats.AckWait(200*time.Millisecond),
			nats.MaxAckPending(5),
		)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		nextMsg := func() *nats.Msg {
			t.Helper()
			msgs, err := sub.Fetch(1)
			if err != nil {
				t.Fatal(err)
			}
			return msgs[0]
		}

		getPending := func() (int, int) {
			t.Helper()
			info, err := sub.ConsumerInfo()
			if err != nil {
				t.Fatal(err)
			}
			return info.NumAckPending, int(info.NumPending)
		}

		getMetadata := func(msg *nats.Msg) *nats.MsgMetadata {
			t.Helper()
			meta, err := msg.Metadata()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			return meta
		}

		expectedPending := func(inflight int, pending int) {
			t.Helper()
			checkFor(t, 2*time.Second, 15*time.Millisecond, func() error {
				i, p := getPending()
				if i != inflight || p != pending {
					return fmt.Errorf("Unexpected inflight/pending msgs: %v/%v", i, p)
				}
				return nil
			})
		}

		checkFor(t, 2*time.Second, 15*time.Millisecond, func() error {
			inflight, pending := getPending()
			if inflight != 0 || pending != totalMsgs {
				return fmt.Errorf("Unexpected inflight/pending msgs: %v/%v", inflight, pending)
			}
			return nil
		})

		// Normal Ack should decrease pending
		msg := nextMsg()
		err = msg.Ack()
		if err != nil {
			t.Fatal(err)
		}

		expectedPending(0, 9)
		meta := getMetadata(msg)

		if meta.Sequence.Consumer != 1 || meta.Sequence.Stream != 1 || meta.NumDelivered != 1 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}

		// AckSync
		msg = nextMsg()
		err = msg.AckSync()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(0, 8)
		meta = getMetadata(msg)
		if meta.Sequence.Consumer != 2 || meta.Sequence.Stream != 2 || meta.NumDelivered != 1 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}

		// Nak the message so that it is redelivered.
		msg = nextMsg()
		err = msg.Nak()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(1, 7)
		meta = getMetadata(msg)
		if meta.Sequence.Consumer != 3 || meta.Sequence.Stream != 3 || meta.NumDelivered != 1 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}
		prevSeq := meta.Sequence.Stream
		prevPayload := string(msg.Data)

		// Nak same sequence again, sequence number should not change.
		msg = nextMsg()
		err = msg.Nak()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(1, 7)
		meta = getMetadata(msg)
		if meta.Sequence.Stream != prevSeq {
			t.Errorf("Expected to get message at seq=%v, got seq=%v", prevSeq, meta.Sequence.Stream)
		}
		if string(msg.Data) != prevPayload {
			t.Errorf("Expected: %q, got: %q", string(prevPayload), string(msg.Data))
		}
		if meta.Sequence.Consumer != 4 || meta.NumDelivered != 2 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}

		// Terminate message so it is no longer pending.
		msg = nextMsg()
		err = msg.Term()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(0, 7)
		meta = getMetadata(msg)
		if meta.Sequence.Stream != prevSeq {
			t.Errorf("Expected to get message at seq=%v, got seq=%v", prevSeq, meta.Sequence.Stream)
		}
		if string(msg.Data) != prevPayload {
			t.Errorf("Expected: %q, got: %q", string(prevPayload), string(msg.Data))
		}
		if meta.Sequence.Consumer != 5 || meta.Sequence.Stream != 3 || meta.NumDelivered != 3 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}

		// Get next message and ack in progress a few times
		msg = nextMsg()
		expected := "i:3"
		if string(msg.Data) != expected {
			t.Errorf("Expected: %q, got: %q", string(msg.Data), expected)
		}
		err = msg.InProgress()
		if err != nil {
			t.Fatal(err)
		}
		err = msg.InProgress()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(1, 6)
		meta = getMetadata(msg)
		if meta.Sequence.Consumer != 6 || meta.Sequence.Stream != 4 || meta.NumDelivered != 1 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}

		// Now ack the message to mark it as done.
		err = msg.AckSync()
		if err != nil {
			t.Fatal(err)
		}
		expectedPending(0, 6)

		// Fetch next message, but do not ack and wait for redelivery.
		msg = nextMsg()
		expectedPending(1, 5)
		meta = getMetadata(msg)
		if meta.Sequence.Consumer != 7 || meta.Sequence.Stream != 5 || meta.NumDelivered != 1 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}
		prevSeq = meta.Sequence.Stream
		time.Sleep(500 * time.Millisecond)
		expectedPending(1, 5)

		// Next message should be a redelivery.
		msg = nextMsg()
		expectedPending(1, 5)
		meta = getMetadata(msg)
		if meta.Sequence.Consumer != 8 || meta.Sequence.Stream != prevSeq || meta.NumDelivered != 2 {
			t.Errorf("Unexpected metadata: %+v", meta)
		}
		err = msg.AckSync()
		if err != nil {
			t.Fatal(err)
		}

		// Get rest of messages.
		count := 5
		for count > 0 {
			msgs, err := sub.Fetch(count)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range msgs {
				count--
				getMetadata(msg)
				msg.Ack()
			}
		}
		expectedPending(0, 0)
	})
}

func TestJetStreamSubscribe_AckDup(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		js.Publish("foo", []byte("hello"))

		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()

		pings := make(chan struct{}, 6)
		nc.Subscribe("$JS.ACK.>", func(msg *nats.Msg) {
			pings <- struct{}{}
		})
		nc.Flush()

		ch := make(chan error, 6)
		_, err = js.Subscribe("foo", func(m *nats.Msg) {
			// Only first ack will be sent, auto ack that will occur after
			// this won't be sent either.
			ch <- m.Ack()

			// Any following acks should fail.
			ch <- m.Ack()
			ch <- m.Nak()
			ch <- m.AckSync()
			ch <- m.Term()
			ch <- m.InProgress()
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		<-ctx.Done()
		ackErr1 := <-ch
		if ackErr1 != nil {
			t.Errorf("Unexpected error: %v", ackErr1)
		}

		for range 5 {
			e := <-ch
			if e != nats.ErrMsgAlreadyAckd {
				t.Errorf("Expected error: %v", e)
			}
		}
		if len(pings) != 1 {
			t.Errorf("Expected to receive a single ack, got: %v", len(pings))
		}
	})
}

func TestJetStreamSubscribe_AutoAck(t *testing.T) {
	tests := []struct {
		name        string
		opt         nats.SubOpt
		expectedAck bool
	}{
		{
			name:        "with ack explicit",
			opt:         nats.AckExplicit(),
			expectedAck: true,
		},
		{
			name:        "with ack all",
			opt:         nats.AckAll(),
			expectedAck: true,
		},
		{
			name:        "with ack none",
			opt:         nats.AckNone(),
			expectedAck: false,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				// Create the stream using our client API.
				_, err = js.AddStream(&nats.StreamConfig{
					Name:     "TEST",
					Subjects: []string{"foo"},
				})
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				js.Publish("foo", []byte("hello"))

				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()

				acks := make(chan struct{}, 2)
				nc.Subscribe("$JS.ACK.>", func(msg *nats.Msg) {
					acks <- struct{}{}
				})
				nc.Flush()

				_, err = js.Subscribe("foo", func(m *nats.Msg) {
				}, test.opt)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				<-ctx.Done()

				if test.expectedAck {
					if len(acks) != 1 {
						t.Fatalf("Expected to receive a single ack, got: %v", len(acks))
					}
					return
				}
				if len(acks) != 0 {
					t.Fatalf("Expected no acks, got: %v", len(acks))
				}
			})
		})
	}
}

func TestJetStreamSubscribe_AckDupInProgress(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		js.Publish("foo", []byte("hello"))

		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()

		pings := make(chan struct{}, 3)
		nc.Subscribe("$JS.ACK.>", func(msg *nats.Msg) {
			pings <- struct{}{}
		})
		nc.Flush()

		ch := make(chan error, 3)
		_, err = js.Subscribe("foo", func(m *nats.Msg) {
			// InProgress ACK can be sent any number of times.
			ch <- m.InProgress()
			ch <- m.InProgress()
			ch <- m.Ack()
		}, nats.Durable("WQ"), nats.ManualAck())
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		<-ctx.Done()
		ackErr1 := <-ch
		ackErr2 := <-ch
		ackErr3 := <-ch
		if ackErr1 != nil {
			t.Errorf("Unexpected error: %v", ackErr1)
		}
		if ackErr2 != nil {
			t.Errorf("Unexpected error: %v", ackErr2)
		}
		if ackErr3 != nil {
			t.Errorf("Unexpected error: %v", ackErr3)
		}
		if len(pings) != 3 {
			t.Errorf("Expected to receive multiple acks, got: %v", len(pings))
		}
	})
}

func TestJetStream_Unsubscribe(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "foo",
			Subjects: []string{"foo.A", "foo.B", "foo.C"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		fetchConsumers := func(t *testing.T, expected int) {
			t.Helper()
			checkFor(t, time.Second, 15*time.Millisecond, func() error {
				var infos []*nats.ConsumerInfo
				for info := range js.Consumers("foo") {
					infos = append(infos, info)
				}
				if len(infos) != expected {
					return fmt.Errorf("Expected %d consumers, got: %d", expected, len(infos))
				}
				return nil
			})
		}

		deleteAllConsumers := func(t *testing.T) {
			t.Helper()
			for cn := range js.ConsumerNames("foo") {
				js.DeleteConsumer("foo", cn)
			}
		}

		js.Publish("foo.A", []byte("A"))
		js.Publish("foo.B", []byte("B"))
		js.Publish("foo.C", []byte("C"))

		t.Run("consumers deleted on unsubscribe", func(t *testing.T) {
			sub, err := js.SubscribeSync("foo.A")
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unsubscribe(); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			sub, err = js.SubscribeSync("foo.B", nats.Durable("B"))
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unsubscribe(); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			sub, err = js.Subscribe("foo.C", func(_ *nats.Msg) {})
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unsubscribe(); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			sub, err = js.Subscribe("foo.C", func(_ *nats.Msg) {}, nats.Durable("C"))
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unsubscribe(); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			fetchConsumers(t, 0)
		})

		t.Run("not deleted on unsubscribe if consumer created externally", func(t *testing.T) {
			// Created by JetStreamManagement
			if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{
				Durable:   "wq",
				AckPolicy: nats.AckExplicitPolicy,
				// Need to specify filter subject here otherwise
				// would get messages from foo.A as well.
				FilterSubject: "foo.C",
			}); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			subC, err := js.PullSubscribe("foo.C", "wq")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			fetchConsumers(t, 1)

			msgs, err := subC.Fetch(1, nats.MaxWait(2*time.Second))
			if err != nil {
				t.Errorf("Unexpected error getting message: %v", err)
			}
			msg := msgs[0]
			got := string(msg.Data)
			expected := "C"
			if got != expected {
				t.Errorf("Expected %v, got %v", expected, got)
			}
			subC.Unsubscribe()
			fetchConsumers(t, 1)
			deleteAllConsumers(t)
		})

		t.Run("consumers deleted on drain", func(t *testing.T) {
			subA, err := js.Subscribe("foo.A", func(_ *nats.Msg) {})
			if err != nil {
				t.Fatal(err)
			}
			fetchConsumers(t, 1)
			err = subA.Drain()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			fetchConsumers(t, 0)
			deleteAllConsumers(t)
		})

		t.Run("durable consumers deleted on drain", func(t *testing.T) {
			subB, err := js.Subscribe("foo.B", func(_ *nats.Msg) {}, nats.Durable("B"))
			if err != nil {
				t.Fatal(err)
			}
			fetchConsumers(t, 1)
			err = subB.Drain()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
			fetchConsumers(t, 0)
		})
	})
}

func TestJetStream_UnsubscribeCloseDrain(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, mc *nats.Conn, inst *testservice.Instance) {
		serverURL := inst.Servers[0].URL
		jsm, err := mc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = jsm.AddStream(&nats.StreamConfig{
			Name:     "foo",
			Subjects: []string{"foo.A", "foo.B", "foo.C"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		fetchConsumers := func(t *testing.T, expected int) []*nats.ConsumerInfo {
			t.Helper()
			var infos []*nats.ConsumerInfo
			for info := range jsm.Consumers("foo") {
				infos = append(infos, info)
			}
			if len(infos) != expected {
				t.Fatalf("Expected %d consumers, got: %d", expected, len(infos))
			}

			return infos
		}

		t.Run("conn drain deletes ephemeral consumers", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			nc, err := nats.Connect(serverURL, nats.ClosedHandler(func(_ *nats.Conn) {
				cancel()
			}))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			js, err := nc.JetStream()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			_, err = js.SubscribeSync("foo.C")
			if err != nil {
				t.Fatal(err)
			}

			// sub.Drain() or nc.Drain() delete JS consumer, same than Unsubscribe()
			nc.Drain()
			<-ctx.Done()
			fetchConsumers(t, 0)
		})

		jsm.Publish("foo.A", []byte("A.1"))
		jsm.Publish("foo.B", []byte("B.1"))
		jsm.Publish("foo.C", []byte("C.1"))

		t.Run("conn close does not delete any consumer", func(t *testing.T) {
			nc, err := nats.Connect(serverURL)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer nc.Close()
			js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			if _, err := js.SubscribeSync("foo.A"); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			subB, err := js.SubscribeSync("foo.B", nats.Durable("B"))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			resp, err := subB.NextMsg(2 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			got := string(resp.Data)
			expected := "B.1"
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}
			fetchConsumers(t, 2)

			// There will be still all consumers since nc.Close
			// does not delete ephemeral consumers.
			nc.Close()
			fetchConsumers(t, 2)
		})

		jsm.Publish("foo.A", []byte("A.2"))
		jsm.Publish("foo.B", []byte("B.2"))
		jsm.Publish("foo.C", []byte("C.2"))

		t.Run("reattached durables consumers cannot be deleted with unsubscribe", func(t *testing.T) {
			nc, err := nats.Connect(serverURL)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			defer nc.Close()
			js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			fetchConsumers(t, 2)

			// The durable interest remains so have to attach now,
			// otherwise would get a stream already used error.
			subB, err := js.SubscribeSync("foo.B", nats.Durable("B"))
			if err != nil {
				t.Fatal(err)
			}

			// No new consumers created since reattached to the same one.
			fetchConsumers(t, 2)

			resp, err := subB.NextMsg(2 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			got := string(resp.Data)
			expected := "B.2"
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			jsm.Publish("foo.B", []byte("B.3"))

			// Sub can still receive the same message.
			resp, err = subB.NextMsg(1 * time.Second)
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			got = string(resp.Data)
			expected = "B.3"
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}
			// Delete durable consumer.
			err = subB.Unsubscribe()
			if err != nil {
				t.Errorf("Unexpected error: %v", err)
			}

			// Since library did not create, the JS consumers remain.
			fetchConsumers(t, 2)
		})
	})
}

func TestJetStream_UnsubscribeDeleteNoPermissions(t *testing.T) {
	c := newTester(t)
	accounts := `accounts: {
  JS: {   # User should not be able to delete consumer.
    jetstream: enabled
    users: [ {user: guest, password: "", permissions: {
      publish: { deny: "$JS.API.CONSUMER.DELETE.>" }
    }}]
  }
}`
	inst := c.CreateServer(t, true,
		testservice.WithAccounts(accounts),
		testservice.WithAuthorization("no_auth_user: guest"),
		testservice.WithSystemAccount(noSystemAccountBody()),
	)
	t.Cleanup(func() { inst.Destroy(t) })

	errCh := make(chan error, 2)
	nc := dialInstance(t, inst, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		errCh <- err
	}))
	c.WaitForJetStream(t, nc)
	defer nc.Close()

	js, err := nc.JetStream(nats.MaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}

	js.AddStream(&nats.StreamConfig{
		Name: "foo",
	})
	js.Publish("foo", []byte("test"))

	sub, err := js.SubscribeSync("foo")
	if err != nil {
		t.Fatal(err)
	}

	_, err = sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}

	// Should fail due to lack of permissions.
	err = sub.Unsubscribe()
	if err == nil {
		t.Errorf("Unexpected success attempting to delete consumer without permissions")
	}

	select {
	case <-time.After(2 * time.Second):
		t.Error("Timeout waiting for permissions error")
	case err = <-errCh:
		if !strings.Contains(err.Error(), `Permissions Violation for Publish to "$JS.API.CONSUMER.DELETE`) {
			t.Error("Expected permissions violation error")
		}
	}
}

func TestJetStreamSubscribe_ReplayPolicy(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// Create the stream using our client API.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		i := 0
		totalMsgs := 10
		for range time.NewTicker(100 * time.Millisecond).C {
			payload := fmt.Sprintf("i:%d", i)
			js.Publish("foo", []byte(payload))
			i++

			if i == totalMsgs {
				break
			}
		}

		// By default it is ReplayInstant playback policy.
		isub, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		ci, err := isub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ci.Config.ReplayPolicy != nats.ReplayInstantPolicy {
			t.Fatalf("Expected original replay policy, got: %v", ci.Config.ReplayPolicy)
		}

		// Change into original playback.
		sub, err := js.SubscribeSync("foo", nats.ReplayOriginal())
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		ci, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ci.Config.ReplayPolicy != nats.ReplayOriginalPolicy {
			t.Fatalf("Expected original replay policy, got: %v", ci.Config.ReplayPolicy)
		}

		// There should already be a message delivered.
		_, err = sub.NextMsg(10 * time.Millisecond)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// We should timeout faster since too soon for the original playback.
		_, err = sub.NextMsg(10 * time.Millisecond)
		if err != nats.ErrTimeout {
			t.Fatalf("Expected timeout error replaying the stream, got: %v", err)
		}

		// Enough time to get the next message according to the original playback.
		_, err = sub.NextMsg(110 * time.Millisecond)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
	})
}

func TestJetStreamSubscribe_RateLimit(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		totalMsgs := 2048
		for range totalMsgs {
			payload := strings.Repeat("A", 1024)
			js.Publish("foo", []byte(payload))
		}

		// By default there is no RateLimit
		isub, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		ci, err := isub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ci.Config.RateLimit != 0 {
			t.Fatalf("Expected no rate limit, got: %v", ci.Config.RateLimit)
		}

		recvd := make(chan *nats.Msg, totalMsgs)
		duration := 2 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), duration)
		defer cancel()

		var rl uint64 = 1024
		sub, err := js.Subscribe("foo", func(m *nats.Msg) {
			recvd <- m

			if len(recvd) == totalMsgs {
				cancel()
			}
		}, nats.RateLimit(rl))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		ci, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if ci.Config.RateLimit != rl {
			t.Fatalf("Expected %v, got: %v", rl, ci.Config.RateLimit)
		}
		<-ctx.Done()

		if len(recvd) >= int(rl) {
			t.Errorf("Expected applied rate limit to push consumer, got %v msgs in %v", recvd, duration)
		}
	})
}

func TestJetStreamSubscribe_FilterSubjects(t *testing.T) {
	tests := []struct {
		name    string
		durable string
	}{
		{
			name: "ephemeral consumer",
		},
		{
			name:    "durable consumer",
			durable: "cons",
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				_, err = js.AddStream(&nats.StreamConfig{
					Name:     "TEST",
					Subjects: []string{"foo", "bar", "baz"},
				})
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				for range 5 {
					js.Publish("foo", []byte("msg"))
				}
				for range 5 {
					js.Publish("bar", []byte("msg"))
				}
				for range 5 {
					js.Publish("baz", []byte("msg"))
				}

				opts := []nats.SubOpt{nats.BindStream("TEST"), nats.ConsumerFilterSubjects("foo", "baz")}
				if test.durable != "" {
					opts = append(opts, nats.Durable(test.durable))
				}
				sub, err := js.SubscribeSync("", opts...)
				if err != nil {
					t.Fatalf("Unexpected error: %s", err)
				}

				for range 10 {
					msg, err := sub.NextMsg(500 * time.Millisecond)
					if err != nil {
						t.Fatalf("Unexpected error: %s", err)
					}
					if msg.Subject != "foo" && msg.Subject != "baz" {
						t.Fatalf("Unexpected message subject: %s", msg.Subject)
					}
				}
			})
		})
	}
}

func TestJetStreamSubscribe_ConfigCantChange(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for _, test := range []struct {
			name   string
			first  nats.SubOpt
			second nats.SubOpt
		}{
			{"description", nats.Description("a"), nats.Description("b")},
			{"deliver policy", nats.DeliverAll(), nats.DeliverLast()},
			{"optional start sequence", nats.StartSequence(1), nats.StartSequence(10)},
			{"optional start time", nats.StartTime(time.Now()), nats.StartTime(time.Now().Add(-2 * time.Hour))},
			{"ack wait", nats.AckWait(10 * time.Second), nats.AckWait(15 * time.Second)},
			{"max deliver", nats.MaxDeliver(3), nats.MaxDeliver(5)},
			{"replay policy", nats.ReplayOriginal(), nats.ReplayInstant()},
			{"max waiting", nats.PullMaxWaiting(10), nats.PullMaxWaiting(20)},
			{"max ack pending", nats.MaxAckPending(10), nats.MaxAckPending(20)},
		} {
			t.Run(test.name, func(t *testing.T) {
				durName := nuid.Next()
				sub, err := js.PullSubscribe("foo", durName, test.first)
				if err != nil {
					t.Fatalf("Error on subscribe: %v", err)
				}
				// Once it is created, options can't be changed.
				_, err = js.PullSubscribe("foo", durName, test.second)
				if err == nil || !strings.Contains(err.Error(), test.name) {
					t.Fatalf("Unexpected error: %v", err)
				}
				sub.Unsubscribe()
			})
		}

		for _, test := range []struct {
			name string
			cc   *nats.ConsumerConfig
			opt  nats.SubOpt
		}{
			{"ack policy", &nats.ConsumerConfig{AckPolicy: nats.AckAllPolicy}, nats.AckNone()},
			{"rate limit", &nats.ConsumerConfig{RateLimit: 10}, nats.RateLimit(100)},
			{"flow control", &nats.ConsumerConfig{FlowControl: false}, nats.EnableFlowControl()},
			{"heartbeat", &nats.ConsumerConfig{Heartbeat: 10 * time.Second}, nats.IdleHeartbeat(20 * time.Second)},
		} {
			t.Run(test.name, func(t *testing.T) {
				durName := nuid.Next()

				cc := test.cc
				cc.Durable = durName
				cc.DeliverSubject = nuid.Next()
				if _, err := js.AddConsumer("TEST", cc); err != nil {
					t.Fatalf("Error creating consumer: %v", err)
				}

				sub, err := js.SubscribeSync("foo", nats.Durable(durName), test.opt)
				if err == nil || !strings.Contains(err.Error(), test.name) {
					t.Fatalf("Unexpected error: %v", err)
				}
				sub.Unsubscribe()
			})
		}

		// Verify that we don't fail if user did not set it.
		for _, test := range []struct {
			name string
			opt  nats.SubOpt
		}{
			{"description", nats.Description("a")},
			{"deliver policy", nats.DeliverAll()},
			{"optional start sequence", nats.StartSequence(10)},
			{"optional start time", nats.StartTime(time.Now())},
			{"ack wait", nats.AckWait(10 * time.Second)},
			{"max deliver", nats.MaxDeliver(3)},
			{"replay policy", nats.ReplayOriginal()},
			{"max waiting", nats.PullMaxWaiting(10)},
			{"max ack pending", nats.MaxAckPending(10)},
		} {
			t.Run(test.name+" not set", func(t *testing.T) {
				durName := nuid.Next()
				sub, err := js.PullSubscribe("foo", durName, test.opt)
				if err != nil {
					t.Fatalf("Error on subscribe: %v", err)
				}
				// If not explicitly asked by the user, we are ok
				_, err = js.PullSubscribe("foo", durName)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				sub.Unsubscribe()
			})
		}

		for _, test := range []struct {
			name string
			opt  nats.SubOpt
		}{
			{"default deliver policy", nats.DeliverAll()},
			{"default ack wait", nats.AckWait(30 * time.Second)},
			{"default replay policy", nats.ReplayInstant()},
			{"default max waiting", nats.PullMaxWaiting(512)},
			{"default ack pending", nats.MaxAckPending(65536)},
		} {
			t.Run(test.name, func(t *testing.T) {
				durName := nuid.Next()
				sub, err := js.PullSubscribe("foo", durName)
				if err != nil {
					t.Fatalf("Error on subscribe: %v", err)
				}
				// If the option is the same as the server default, it is not an error either.
				_, err = js.PullSubscribe("foo", durName, test.opt)
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				sub.Unsubscribe()
			})
		}

		for _, test := range []struct {
			name string
			opt  nats.SubOpt
		}{
			{"policy", nats.DeliverNew()},
			{"ack wait", nats.AckWait(31 * time.Second)},
			{"replay policy", nats.ReplayOriginal()},
			{"max waiting", nats.PullMaxWaiting(513)},
			{"ack pending", nats.MaxAckPending(2)},
		} {
			t.Run(test.name+" changed from default", func(t *testing.T) {
				durName := nuid.Next()
				sub, err := js.PullSubscribe("foo", durName)
				if err != nil {
					t.Fatalf("Error on subscribe: %v", err)
				}
				// First time it was created with defaults and the
				// second time a change is attempted, so it is an error.
				_, err = js.PullSubscribe("foo", durName, test.opt)
				if err == nil || !strings.Contains(err.Error(), test.name) {
					t.Fatalf("Unexpected error: %v", err)
				}
				sub.Unsubscribe()
			})
		}

		if _, err := js.AddConsumer("TEST", &nats.ConsumerConfig{
			Durable:        "BindDurable",
			DeliverSubject: "bar",
		}); err != nil {
			t.Fatalf("Failed to create consumer: %v", err)
		}
		if _, err := js.SubscribeSync("foo", nats.Bind("TEST", "BindDurable")); err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
	})
}

func TestJetStreamStreamMirror(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		// No placement tags: the cluster helper only assigns NODE_x tags when
		// size > 1, so a single server has none to place on.
		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "origin",
			Storage:  nats.MemoryStorage,
			Replicas: 1,
		})
		if err != nil {
			t.Fatalf("Unexpected error creating stream: %v", err)
		}

		totalMsgs := 10
		for i := range totalMsgs {
			payload := fmt.Sprintf("i:%d", i)
			js.Publish("origin", []byte(payload))
		}

		t.Run("create mirrors", func(t *testing.T) {
			_, err = js.AddStream(&nats.StreamConfig{
				Name:     "m1",
				Mirror:   &nats.StreamSource{Name: "origin"},
				Storage:  nats.FileStorage,
				Replicas: 1,
			})
			if err != nil {
				t.Fatalf("Unexpected error creating stream: %v", err)
			}

			_, err = js.AddStream(&nats.StreamConfig{
				Name:     "m2",
				Mirror:   &nats.StreamSource{Name: "origin"},
				Storage:  nats.MemoryStorage,
				Replicas: 1,
			})
			if err != nil {
				t.Fatalf("Unexpected error creating stream: %v", err)
			}
			msgs := make([]*nats.RawStreamMsg, 0)

			startSequence := 1

		GetNextMsg:
			for i := startSequence; i < totalMsgs+1; i++ {
				var (
					err       error
					seq       = uint64(i)
					msgA      *nats.RawStreamMsg
					msgB      *nats.RawStreamMsg
					sourceMsg *nats.RawStreamMsg
					timeout   = time.Now().Add(2 * time.Second)
				)

				for time.Now().Before(timeout) {
					sourceMsg, err = js.GetMsg("origin", seq)
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					msgA, err = js.GetMsg("m1", seq)
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					if !reflect.DeepEqual(sourceMsg, msgA) {
						t.Errorf("Expected %+v, got: %+v", sourceMsg, msgA)
					}

					msgB, err = js.GetMsg("m2", seq)
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					if !reflect.DeepEqual(sourceMsg, msgB) {
						t.Errorf("Expected %+v, got: %+v", sourceMsg, msgB)
					}

					msgs = append(msgs, msgA)
					continue GetNextMsg
				}
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
			}

			got := len(msgs)
			if got < totalMsgs {
				t.Errorf("Expected %v, got: %v", totalMsgs, got)
			}

			t.Run("consume from mirror", func(t *testing.T) {
				sub, err := js.SubscribeSync("origin", nats.BindStream("m1"))
				if err != nil {
					t.Fatal(err)
				}

				mmsgs := make([]*nats.Msg, 0)
				for range totalMsgs {
					msg, err := sub.NextMsg(2 * time.Second)
					if err != nil {
						t.Error(err)
					}
					meta, err := msg.Metadata()
					if err != nil {
						t.Error(err)
					}
					if meta.Stream != "m1" {
						t.Errorf("Expected m1, got: %v", meta.Stream)
					}
					mmsgs = append(mmsgs, msg)
				}
				if len(mmsgs) != totalMsgs {
					t.Errorf("Expected to consume %v msgs, got: %v", totalMsgs, len(mmsgs))
				}
			})
		})

		t.Run("consume from original source", func(t *testing.T) {
			sub, err := js.SubscribeSync("origin")
			defer sub.Unsubscribe()
			if err != nil {
				t.Fatal(err)
			}
			msg, err := sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Error(err)
			}
			meta, err := msg.Metadata()
			if err != nil {
				t.Error(err)
			}
			if meta.Stream != "origin" {
				t.Errorf("Expected m1, got: %v", meta.Stream)
			}
		})

		t.Run("bind to non existing stream fails", func(t *testing.T) {
			_, err := js.SubscribeSync("origin", nats.BindStream("foo"))
			if err == nil {
				t.Fatal("Unexpected success")
			}
			if !errors.Is(err, nats.ErrStreamNotFound) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrStreamNotFound, err)
			}
		})

		t.Run("bind to origin stream", func(t *testing.T) {
			sub, err := js.SubscribeSync("origin", nats.BindStream("origin"))
			if err != nil {
				t.Fatal(err)
			}
			msg, err := sub.NextMsg(2 * time.Second)
			if err != nil {
				t.Error(err)
			}
			meta, err := msg.Metadata()
			if err != nil {
				t.Error(err)
			}
			if meta.Stream != "origin" {
				t.Errorf("Expected m1, got: %v", meta.Stream)
			}
		})

		t.Run("get mirror info", func(t *testing.T) {
			m1, err := js.StreamInfo("m1")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			got := m1.Mirror.Name
			expected := "origin"
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			m2, err := js.StreamInfo("m2")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			got = m2.Mirror.Name
			expected = "origin"
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}
		})

		t.Run("create stream from sources", func(t *testing.T) {
			sources := make([]*nats.StreamSource, 0)
			sources = append(sources, &nats.StreamSource{Name: "m1"})
			sources = append(sources, &nats.StreamSource{Name: "m2"})
			_, err = js.AddStream(&nats.StreamConfig{
				Name:     "s1",
				Sources:  sources,
				Storage:  nats.FileStorage,
				Replicas: 1,
			})
			if err != nil {
				t.Fatalf("Unexpected error creating stream: %v", err)
			}

			msgs := make([]*nats.RawStreamMsg, 0)

			startSequence := 1
			expectedTotal := totalMsgs * 2

		GetNextMsg:
			for i := startSequence; i < expectedTotal+1; i++ {
				var (
					err     error
					seq     = uint64(i)
					msg     *nats.RawStreamMsg
					timeout = time.Now().Add(5 * time.Second)
				)

			Retry:
				for time.Now().Before(timeout) {
					msg, err = js.GetMsg("s1", seq)
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue Retry
					}
					msgs = append(msgs, msg)
					continue GetNextMsg
				}
				if err != nil {
					t.Fatalf("Unexpected error fetching seq=%v: %v", seq, err)
				}
			}

			got := len(msgs)
			if got < expectedTotal {
				t.Errorf("Expected %v, got: %v", expectedTotal, got)
			}

			si, err := js.StreamInfo("s1")
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			got = int(si.State.Msgs)
			if got != expectedTotal {
				t.Errorf("Expected %v, got: %v", expectedTotal, got)
			}

			got = len(si.Sources)
			expected := 2
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			t.Run("consume from sourced stream", func(t *testing.T) {
				sub, err := js.SubscribeSync("origin", nats.BindStream("s1"))
				if err != nil {
					t.Error(err)
				}
				_, err = sub.NextMsg(2 * time.Second)
				if err != nil {
					t.Error(err)
				}
			})
		})

		t.Run("update stream with sources", func(t *testing.T) {
			si, err := js.StreamInfo("s1")
			if err != nil {
				t.Fatalf("Unexpected error creating stream: %v", err)
			}
			got := len(si.Config.Sources)
			expected := 2
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			got = len(si.Sources)
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			config := si.Config
			config.MaxMsgs = 128
			updated, err := js.UpdateStream(&config)
			if err != nil {
				t.Fatalf("Unexpected error creating stream: %v", err)
			}

			got = len(updated.Config.Sources)
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}

			got = int(updated.Config.MaxMsgs)
			expected = int(config.MaxMsgs)
			if got != expected {
				t.Errorf("Expected %v, got: %v", expected, got)
			}
		})

		t.Run("bind to stream with subject not in stream", func(t *testing.T) {
			sub, err := js.SubscribeSync("nothing", nats.BindStream("origin"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = sub.NextMsg(1 * time.Second)
			if !errors.Is(err, nats.ErrTimeout) {
				t.Fatal("Expected timeout error")
			}

			info, err := sub.ConsumerInfo()
			if err != nil {
				t.Fatal(err)
			}
			got := info.Stream
			expected := "origin"
			if got != expected {
				t.Fatalf("Expected %v, got %v", expected, got)
			}

			got = info.Config.FilterSubject
			expected = "nothing"
			if got != expected {
				t.Fatalf("Expected %v, got %v", expected, got)
			}

			t.Run("can consume after stream update", func(t *testing.T) {
				_, err = js.UpdateStream(&nats.StreamConfig{
					Name:     "origin",
					Storage:  nats.MemoryStorage,
					Replicas: 1,
					Subjects: []string{"origin", "nothing"},
				})
				js.Publish("nothing", []byte("hello world"))

				msg, err := sub.NextMsg(1 * time.Second)
				if err != nil {
					t.Error(err)
				}
				got = msg.Subject
				expected = "nothing"
				if got != expected {
					t.Fatalf("Expected %v, got %v", expected, got)
				}
			})
		})

		t.Run("create sourced stream with a cycle", func(t *testing.T) {
			sources := make([]*nats.StreamSource, 0)
			sources = append(sources, &nats.StreamSource{Name: "origin"})
			sources = append(sources, &nats.StreamSource{Name: "m1"})
			streamName := "s2"
			_, err = js.AddStream(&nats.StreamConfig{
				Name:     streamName,
				Sources:  sources,
				Storage:  nats.FileStorage,
				Replicas: 1,
			})
			var aerr *nats.APIError
			if ok := errors.As(err, &aerr); !ok || aerr.ErrorCode != nats.JSStreamInvalidConfig {
				t.Fatalf("Expected nats.APIError, got %v", err)
			}
		})
	})
}

func TestJetStream_ClusterMultipleSubscribe(t *testing.T) {
	nodes := []int{1, 3}
	replicas := []int{1}

	for _, n := range nodes {
		for _, r := range replicas {
			if r > 1 && n == 1 {
				continue
			}

			t.Run(fmt.Sprintf("qsub n=%d r=%d", n, r), func(t *testing.T) {
				name := fmt.Sprintf("MSUB%d%d", n, r)
				stream := &nats.StreamConfig{
					Name:     name,
					Replicas: r,
				}
				withClusterAndStream(t, n, stream, testJetStreamClusterMultipleQueueSubscribeTS)
			})

			t.Run(fmt.Sprintf("psub n=%d r=%d", n, r), func(t *testing.T) {
				name := fmt.Sprintf("PSUBN%d%d", n, r)
				stream := &nats.StreamConfig{
					Name:     name,
					Replicas: n,
				}
				withClusterAndStream(t, n, stream, testJetStreamClusterMultiplePullSubscribeTS)
			})

			t.Run(fmt.Sprintf("psub n=%d r=%d multi fetch", n, r), func(t *testing.T) {
				name := fmt.Sprintf("PFSUBN%d%d", n, r)
				stream := &nats.StreamConfig{
					Name:     name,
					Replicas: n,
				}
				withClusterAndStream(t, n, stream, testJetStreamClusterMultipleFetchPullSubscribeTS)
			})
		}
	}
}

// withClusterAndStream spins up a single JS server when size == 1 or a JS
// cluster when size > 1, then creates the supplied stream and invokes fn.
// Sized for the testservice-based TestJetStream_ClusterMultipleSubscribe.
func withClusterAndStream(t *testing.T, size int, stream *nats.StreamConfig, fn func(t *testing.T, subject string, nc *nats.Conn)) {
	t.Helper()
	c := newTester(t)
	var inst *testservice.Instance
	if size == 1 {
		inst = c.CreateServer(t, true)
	} else {
		inst = c.CreateCluster(t, size, true)
	}
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)

	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	// Retry stream creation while cluster settles (mirrors withJSClusterAndStream).
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = js.AddStream(stream)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Unexpected error creating stream: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	fn(t, stream.Name, nc)
}

func testJetStreamClusterMultipleQueueSubscribeTS(t *testing.T, subject string, nc *nats.Conn) {
	var wg sync.WaitGroup
	ctx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()

	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}

	size := 5
	subs := make([]*nats.Subscription, size)
	errCh := make(chan error, size)

	sub, err := js.QueueSubscribeSync(subject, "wq", nats.Durable("shared"))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	subs[0] = sub

	for i := 1; i < size; i++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			var sub *nats.Subscription
			var err error
			for range 5 {
				sub, err = js.QueueSubscribeSync(subject, "wq", nats.Durable("shared"))
				if err != nil {
					time.Sleep(1 * time.Second)
					continue
				}
				break
			}
			if err != nil {
				errCh <- err
			} else {
				subs[n] = sub
			}
		}(i)
	}

	go func() {
		wg.Wait()
		done()
	}()

	wg.Wait()
	for range size * 2 {
		js.Publish(subject, []byte("test"))
	}

	delivered := 0
	for _, sub := range subs {
		if sub == nil {
			continue
		}
		if nmsgs, _, _ := sub.Pending(); err != nil || nmsgs > 0 {
			delivered++
		}
	}
	if delivered < 2 {
		t.Fatalf("Expected more than one subscriber to receive a message, got: %v", delivered)
	}

	select {
	case <-ctx.Done():
	case err := <-errCh:
		if err != nil {
			t.Fatalf("Unexpected error with multiple queue subscribers: %v", err)
		}
	}
}

func testJetStreamClusterMultiplePullSubscribeTS(t *testing.T, subject string, nc *nats.Conn) {
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	ctx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()

	size := 5
	subs := make([]*nats.Subscription, size)
	errCh := make(chan error, size)
	for i := range size {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			var sub *nats.Subscription
			var err error
			for range 5 {
				sub, err = js.PullSubscribe(subject, "shared")
				if err != nil {
					time.Sleep(1 * time.Second)
					continue
				}
				break
			}
			if err != nil {
				errCh <- err
			} else {
				subs[n] = sub
			}
		}(i)
	}

	go func() {
		wg.Wait()
		done()
	}()

	wg.Wait()
	for range size * 2 {
		js.Publish(subject, []byte("test"))
	}

	delivered := 0
	for i, sub := range subs {
		if sub == nil {
			continue
		}
		for range 4 {
			_, err := sub.Fetch(1, nats.MaxWait(250*time.Millisecond))
			if err != nil {
				t.Logf("%v WARN: Timeout waiting for next message: %v", i, err)
				continue
			}
			delivered++
			break
		}
	}

	if delivered < 2 {
		t.Fatalf("Expected more than one subscriber to receive a message, got: %v", delivered)
	}

	select {
	case <-ctx.Done():
	case err := <-errCh:
		if err != nil {
			t.Fatalf("Unexpected error with multiple pull subscribers: %v", err)
		}
	}
}

func testJetStreamClusterMultipleFetchPullSubscribeTS(t *testing.T, subject string, nc *nats.Conn) {
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()

	nsubs := 4
	subs := make([]*nats.Subscription, nsubs)
	errCh := make(chan error, nsubs)
	var queues sync.Map
	for i := range nsubs {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			sub, err := js.PullSubscribe(subject, "shared")
			if err != nil {
				errCh <- err
			} else {
				subs[n] = sub
				queues.Store(sub.Subject, make([]*nats.Msg, 0))
			}
		}(i)
	}

	wg.Wait()
	var (
		total     uint64 = 100
		delivered uint64
		batchSize = 2
	)
	go func() {
		for i := range int(total) {
			js.Publish(subject, []byte(fmt.Sprintf("n:%v", i)))
			time.Sleep(1 * time.Millisecond)
		}
	}()

	ctx2, done2 := context.WithTimeout(ctx, 3*time.Second)
	defer done2()

	for _, psub := range subs {
		if psub == nil {
			continue
		}
		sub := psub
		subject := sub.Subject
		v, _ := queues.Load(sub.Subject)
		queue := v.([]*nats.Msg)
		go func() {
			for {
				select {
				case <-ctx2.Done():
					return
				default:
				}

				if current := atomic.LoadUint64(&delivered); current >= total {
					done2()
					return
				}

				for range 4 {
					recvd, err := sub.Fetch(batchSize, nats.MaxWait(1*time.Second))
					if err != nil {
						if err == nats.ErrConnectionClosed {
							return
						}
						current := atomic.LoadUint64(&delivered)
						if current >= total {
							done2()
							return
						} else {
							t.Logf("WARN: Timeout waiting for next message: %v", err)
						}
						continue
					}
					for _, msg := range recvd {
						queue = append(queue, msg)
						queues.Store(subject, queue)
					}
					atomic.AddUint64(&delivered, uint64(len(recvd)))
					break
				}
			}
		}()
	}

	<-ctx2.Done()

	if delivered < total {
		t.Fatalf("Expected %v, got: %v", total, delivered)
	}

	select {
	case <-ctx.Done():
	case err := <-errCh:
		if err != nil {
			t.Fatalf("Unexpected error with multiple pull subscribers: %v", err)
		}
	}

	var (
		gotNoMessages bool
		count         = 0
	)
	queues.Range(func(k, v any) bool {
		msgs := v.([]*nats.Msg)
		count += len(msgs)

		if len(msgs) == 0 {
			gotNoMessages = true
			return false
		}
		return true
	})

	if gotNoMessages {
		t.Error("Expected all pull subscribers to receive some messages")
	}
}

func TestJetStream_ClusterReconnect(t *testing.T) {
	t.Skip("This test need to be revisited")
}

func TestJetStreamPullSubscribeOptions(t *testing.T) {
	c := newTester(t)
	inst := c.CreateCluster(t, 3, true)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)
	waitForJSCluster(t, nc)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	subject := "WQ"
	_, err = js.AddStream(&nats.StreamConfig{
		Name:     subject,
		Replicas: 1,
	})
	if err != nil {
		t.Fatal(err)
	}

	sendMsgs := func(t *testing.T, totalMsgs int) {
		t.Helper()
		for i := range totalMsgs {
			payload := fmt.Sprintf("i:%d", i)
			if _, err := js.Publish(subject, []byte(payload)); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
		}
	}

	t.Run("max request batch", func(t *testing.T) {
		defer js.PurgeStream(subject)

		sub, err := js.PullSubscribe(subject, "max-request-batch", nats.MaxRequestBatch(2))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if _, err := sub.Fetch(10); err == nil || !strings.Contains(err.Error(), "MaxRequestBatch of 2") {
			t.Fatalf("Expected error about max request batch size, got %v", err)
		}
	})

	t.Run("max request max bytes", func(t *testing.T) {
		defer js.PurgeStream(subject)

		sub, err := js.PullSubscribe(subject, "max-request-max-bytes", nats.MaxRequestMaxBytes(100))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		if _, err := sub.Fetch(10, nats.PullMaxBytes(200)); err == nil || !strings.Contains(err.Error(), "MaxRequestMaxBytes of 100") {
			t.Fatalf("Expected error about max request max bytes, got %v", err)
		}
	})

	t.Run("max request expires", func(t *testing.T) {
		defer js.PurgeStream(subject)

		sub, err := js.PullSubscribe(subject, "max-request-expires", nats.MaxRequestExpires(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if _, err := sub.Fetch(10); err == nil || !strings.Contains(err.Error(), "MaxRequestExpires of 50ms") {
			t.Fatalf("Expected error about max request expiration, got %v", err)
		}
	})

	t.Run("batch size", func(t *testing.T) {
		defer js.PurgeStream(subject)

		expected := 10
		sendMsgs(t, expected)
		sub, err := js.PullSubscribe(subject, "batch-size")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		msgs, err := sub.Fetch(expected, nats.MaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}

		for _, msg := range msgs {
			msg.AckSync()
		}

		got := len(msgs)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}

		_, err = sub.Fetch(1, nats.MaxWait(250*time.Millisecond))
		if err != nats.ErrTimeout {
			t.Errorf("Expected timeout fetching next message, got: %v", err)
		}

		expected = 5
		sendMsgs(t, expected)
		msgs, err = sub.Fetch(expected, nats.MaxWait(1*time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		got = len(msgs)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}

		for _, msg := range msgs {
			msg.Ack()
		}
	})

	t.Run("sub drain is no op", func(t *testing.T) {
		defer js.PurgeStream(subject)

		expected := 10
		sendMsgs(t, expected)
		sub, err := js.PullSubscribe(subject, "batch-ctx")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		msgs, err := sub.Fetch(expected, nats.MaxWait(2*time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		got := len(msgs)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}
		if err := sub.Drain(); err != nil {
			t.Errorf("Unexpected error: %v", err)
		}
	})

	t.Run("fetch after unsubscribe", func(t *testing.T) {
		defer js.PurgeStream(subject)

		expected := 10
		sendMsgs(t, expected)
		sub, err := js.PullSubscribe(subject, "fetch-unsub")
		if err != nil {
			t.Fatal(err)
		}

		if err := sub.Unsubscribe(); err != nil {
			t.Fatal(err)
		}

		_, err = sub.Fetch(1, nats.MaxWait(500*time.Millisecond))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if !errors.Is(err, nats.ErrBadSubscription) {
			t.Fatalf("Unexpected error: %v", err)
		}
	})

	t.Run("max waiting exceeded", func(t *testing.T) {
		defer js.PurgeStream(subject)

		_, err := js.AddConsumer(subject, &nats.ConsumerConfig{
			Durable:    "max-waiting",
			MaxWaiting: 2,
			AckPolicy:  nats.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatal(err)
		}

		var wg sync.WaitGroup
		wg.Add(2)
		for range 2 {
			go func() {
				defer wg.Done()

				sub, err := js.PullSubscribe(subject, "max-waiting")
				if err != nil {
					return
				}
				sub.Fetch(1, nats.MaxWait(time.Second))
			}()
		}

		checkFor(t, time.Second, 15*time.Millisecond, func() error {
			ci, err := js.ConsumerInfo(subject, "max-waiting")
			if err != nil {
				return err
			}
			if n := ci.NumWaiting; n != 2 {
				return fmt.Errorf("NumWaiting should be 2, was %v", n)
			}
			return nil
		})

		sub, err := js.PullSubscribe(subject, "max-waiting")
		if err != nil {
			t.Fatal(err)
		}
		_, err = sub.Fetch(1, nats.MaxWait(time.Second))
		if err == nil || !strings.Contains(err.Error(), "MaxWaiting") {
			t.Fatalf("Unexpected error: %v", err)
		}
		wg.Wait()
	})

	t.Run("no wait", func(t *testing.T) {
		defer js.PurgeStream(subject)

		expected := 10
		sendMsgs(t, expected)
		sub, err := js.PullSubscribe(subject, "no-wait")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		recvd := make([]*nats.Msg, 0)

	Loop:
		for range time.NewTicker(100 * time.Millisecond).C {
			select {
			case <-ctx.Done():
				break Loop
			default:
			}

			msgs, err := sub.Fetch(1, nats.MaxWait(250*time.Millisecond))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			recvd = append(recvd, msgs[0])

			for _, msg := range msgs {
				if err := msg.AckSync(); err != nil {
					t.Error(err)
				}
			}

			if len(recvd) == expected {
				done()
				break
			}
		}

		got := len(recvd)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}

		msgs, err := sub.Fetch(expected, nats.MaxWait(2*time.Second))
		if err == nil {
			t.Fatal("Unexpected success", len(msgs))
		}
		if err != nats.ErrTimeout {
			t.Fatalf("Expected timeout error, got: %v", err)
		}
	})
}

func TestJetStreamPublishAsync(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, nc *nats.Conn, _ *testservice.Instance) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		paf, err := js.PublishAsync("foo", []byte("Hello JS"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		select {
		case <-paf.Ok():
			t.Fatalf("Did not expect to get PubAck")
		case err := <-paf.Err():
			if err != nats.ErrNoResponders {
				t.Fatalf("Expected a ErrNoResponders error, got %v", err)
			}
			m := paf.Msg()
			if m == nil {
				t.Fatalf("Expected to be able to retrieve the message")
			}
			if m.Subject != "foo" || string(m.Data) != "Hello JS" {
				t.Fatalf("Wrong message: %+v", m)
			}
		case <-time.After(time.Second):
			t.Fatalf("Did not receive an error in time")
		}

		if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST"}); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		paf, err = js.PublishAsync("TEST", []byte("Hello JS ASYNC PUB"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		select {
		case pa := <-paf.Ok():
			if pa.Stream != "TEST" || pa.Sequence != 1 {
				t.Fatalf("Bad PubAck: %+v", pa)
			}
		case err := <-paf.Err():
			t.Fatalf("Did not expect to get an error: %v", err)
		case <-time.After(time.Second):
			t.Fatalf("Did not receive a PubAck in time")
		}

		errCh := make(chan error, 1)

		errHandler := func(js nats.JetStream, originalMsg *nats.Msg, err error) {
			if originalMsg == nil {
				t.Fatalf("Expected non-nil original message")
			}
			errCh <- err
		}

		js, err = nc.JetStream(nats.PublishAsyncErrHandler(errHandler))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err = js.PublishAsync("bar", []byte("Hello JS ASYNC PUB")); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		select {
		case err := <-errCh:
			if err != nats.ErrNoResponders {
				t.Fatalf("Expected a ErrNoResponders error, got %v", err)
			}
		case <-time.After(time.Second):
			t.Fatalf("Did not receive an async err in time")
		}

		js, err = nc.JetStream(nats.PublishAsyncMaxPending(10))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for range 100 {
			if _, err = js.PublishAsync("bar", []byte("Hello JS ASYNC PUB")); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if np := js.PublishAsyncPending(); np > 10 {
				t.Fatalf("Expected num pending to not exceed 10, got %d", np)
			}
		}

		js, err = nc.JetStream(nats.PublishAsyncMaxPending(10))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for range 500 {
			if _, err = js.PublishAsync("bar", []byte("Hello JS ASYNC PUB")); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
		}

		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}

		_, err = js.PublishAsync("foo", []byte("Bad"), nats.StallWait(0))
		expectedErr := "nats: stall wait should be more than 0"
		if err == nil || err.Error() != expectedErr {
			t.Errorf("Expected %v, got: %v", expectedErr, err)
		}

		_, err = js.Publish("foo", []byte("Also bad"), nats.StallWait(200*time.Millisecond))
		expectedErr = "nats: stall wait cannot be set to sync publish"
		if err == nil || err.Error() != expectedErr {
			t.Errorf("Expected %v, got: %v", expectedErr, err)
		}
	})

	// CustomInboxPrefix variant in its own scope so the connection is opened
	// with the custom prefix from the start.
	withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
		nc := dialInstance(t, inst, nats.CustomInboxPrefix("_BOX"))
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		paf, err := js.PublishAsync("foo", []byte("Hello JS with Custom Inbox"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		select {
		case <-paf.Ok():
			t.Fatalf("Did not expect to get PubAck")
		case err := <-paf.Err():
			if err != nats.ErrNoResponders {
				t.Fatalf("Expected a ErrNoResponders error, got %v", err)
			}
			m := paf.Msg()
			if m == nil {
				t.Fatalf("Expected to be able to retrieve the message")
			}
			if m.Subject != "foo" || string(m.Data) != "Hello JS with Custom Inbox" {
				t.Fatalf("Wrong message: %+v", m)
			}
		case <-time.After(time.Second):
			t.Fatalf("Did not receive an error in time")
		}
	})
}

func TestPublishAsyncResetPendingOnReconnect(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, nc *nats.Conn, inst *testservice.Instance) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"FOO"}}); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		errs := make(chan error, 1)
		doneCh := make(chan struct{}, 1)
		acks := make(chan nats.PubAckFuture, 100)
		go func() {
			for range 100 {
				if ack, err := js.PublishAsync("FOO", []byte("hello")); err != nil {
					errs <- err
					return
				} else {
					acks <- ack
				}
			}
			close(acks)
			doneCh <- struct{}{}
		}()
		select {
		case <-doneCh:
		case err := <-errs:
			t.Fatalf("Unexpected error during publish: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}
		inst.StopServer(t, inst.Servers[0])
		time.Sleep(100 * time.Millisecond)
		if pending := js.PublishAsyncPending(); pending != 0 {
			t.Fatalf("Expected no pending messages after server shutdown; got: %d", pending)
		}
		inst.StartServer(t, inst.Servers[0])

		for ack := range acks {
			select {
			case <-ack.Ok():
			case err := <-ack.Err():
				if !errors.Is(err, nats.ErrDisconnected) && !errors.Is(err, nats.ErrNoResponders) {
					t.Fatalf("Expected error: %v or %v; got: %v", nats.ErrDisconnected, nats.ErrNoResponders, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Did not receive completion signal")
			}
		}
	})
}

func TestPublishAsyncAckTimeout(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		errs := make(chan error, 1)
		js, err := nc.JetStream(
			nats.PublishAsyncTimeout(50*time.Millisecond),
			nats.PublishAsyncErrHandler(func(js nats.JetStream, m *nats.Msg, e error) {
				errs <- e
			}),
		)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}, NoAck: true})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		ack, err := js.PublishAsync("FOO.A", []byte("hello"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		select {
		case <-ack.Ok():
			t.Fatalf("Expected timeout")
		case err := <-ack.Err():
			if !errors.Is(err, nats.ErrAsyncPublishTimeout) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrAsyncPublishTimeout, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("Did not receive ack timeout")
		}

		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrAsyncPublishTimeout) {
				t.Fatalf("Expected error: %v; got: %v", nats.ErrAsyncPublishTimeout, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("Did not receive error from error handler")
		}

		if js.PublishAsyncPending() != 0 {
			t.Fatalf("Expected no pending messages")
		}

		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(100 * time.Millisecond):
			t.Fatalf("Did not receive completion signal")
		}
	})
}

func TestPublishAsyncClearStall(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(
			nats.PublishAsyncTimeout(500*time.Millisecond),
			nats.PublishAsyncMaxPending(100))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}, NoAck: true})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		for range 100 {
			_, err := js.PublishAsync("FOO.A", []byte("hello"), nats.StallWait(1*time.Nanosecond))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
		}
		_, err = js.PublishAsync("FOO.A", []byte("hello"), nats.StallWait(50*time.Millisecond))
		if !errors.Is(err, nats.ErrTooManyStalledMsgs) {
			t.Fatalf("Expected error: %v; got: %v", nats.ErrTooManyStalledMsgs, err)
		}

		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(2 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}

		if _, err = js.PublishAsync("FOO.A", []byte("hello")); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if js.PublishAsyncPending() != 1 {
			t.Fatalf("Expected 1 pending message; got: %d", js.PublishAsyncPending())
		}
	})
}

func TestPublishAsyncRetryInErrHandler(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		streamCreated := make(chan struct{})
		errCB := func(js nats.JetStream, m *nats.Msg, e error) {
			<-streamCreated
			_, err := js.PublishMsgAsync(m)
			if err != nil {
				t.Fatalf("Unexpected error when republishing: %v", err)
			}
		}

		js, err := nc.JetStream(nats.PublishAsyncErrHandler(errCB))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		errs := make(chan error, 1)
		doneCh := make(chan struct{}, 1)
		go func() {
			for range 10 {
				if _, err := js.PublishAsync("FOO.A", []byte("hello")); err != nil {
					errs <- err
					return
				}
			}
			doneCh <- struct{}{}
		}()
		select {
		case <-doneCh:
		case err := <-errs:
			t.Fatalf("Unexpected error during publish: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}
		_, err = js.AddStream(&nats.StreamConfig{Name: "foo", Subjects: []string{"FOO.*"}})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		close(streamCreated)
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}

		info, err := js.StreamInfo("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if info.State.Msgs != 10 {
			t.Fatalf("Expected 10 messages in the stream; got: %d", info.State.Msgs)
		}
	})
}

func TestJetStreamPublishAsyncPerf(t *testing.T) {
	t.SkipNow()

	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		// 64 byte payload.
		msg := make([]byte, 64)
		rand.Read(msg)

		var asyncErrs uint32
		errHandler := func(js nats.JetStream, originalMsg *nats.Msg, err error) {
			t.Logf("Got an async err: %v", err)
			atomic.AddUint32(&asyncErrs, 1)
		}

		js, err := nc.JetStream(
			nats.PublishAsyncErrHandler(errHandler),
			nats.PublishAsyncMaxPending(256),
		)
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{Name: "B"}); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		toSend := 1000000
		start := time.Now()
		for range toSend {
			if _, err = js.PublishAsync("B", msg); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
		}

		select {
		case <-js.PublishAsyncComplete():
			if ne := atomic.LoadUint32(&asyncErrs); ne > 0 {
				t.Fatalf("Got unexpected errors publishing")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Did not receive completion signal")
		}

		tt := time.Since(start)
		fmt.Printf("Took %v to send %d msgs\n", tt, toSend)
		fmt.Printf("%.0f msgs/sec\n\n", float64(toSend)/tt.Seconds())
	})
}

func TestPublishAsyncRetry(t *testing.T) {
	tests := []struct {
		name     string
		pubOpts  []nats.PubOpt
		ackError error
		pubErr   error
	}{
		{
			name: "retry until stream is ready",
			pubOpts: []nats.PubOpt{
				nats.RetryAttempts(10),
				nats.RetryWait(100 * time.Millisecond),
			},
		},
		{
			name: "fail after max retries",
			pubOpts: []nats.PubOpt{
				nats.RetryAttempts(2),
				nats.RetryWait(50 * time.Millisecond),
			},
			ackError: nats.ErrNoResponders,
		},
		{
			name:     "no retries",
			pubOpts:  nil,
			ackError: nats.ErrNoResponders,
		},
		{
			name: "invalid retry attempts",
			pubOpts: []nats.PubOpt{
				nats.RetryAttempts(-1),
			},
			pubErr: nats.ErrInvalidArg,
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.PublishAsyncMaxPending(1))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				test.pubOpts = append(test.pubOpts, nats.StallWait(1*time.Nanosecond))
				ack, err := js.PublishAsync("foo", []byte("hello"), test.pubOpts...)
				if !errors.Is(err, test.pubErr) {
					t.Fatalf("Expected error: %v; got: %v", test.pubErr, err)
				}
				if err != nil {
					return
				}
				errs := make(chan error, 1)
				go func() {
					time.Sleep(300 * time.Millisecond)
					if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"foo"}}); err != nil {
						errs <- err
					}
				}()
				select {
				case <-ack.Ok():
				case err := <-ack.Err():
					if test.ackError != nil {
						if !errors.Is(err, test.ackError) {
							t.Fatalf("Expected error: %v; got: %v", test.ackError, err)
						}
					} else {
						t.Fatalf("Unexpected ack error: %v", err)
					}
				case err := <-errs:
					t.Fatalf("Error creating stream: %v", err)
				case <-time.After(5 * time.Second):
					t.Fatalf("Timeout waiting for ack")
				}
			})
		})
	}
}

func TestJetStreamCleanupPublisher(t *testing.T) {
	t.Run("cleanup js publisher", func(t *testing.T) {
		withJSServer(t, func(t *testing.T, nc *nats.Conn) {
			js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"FOO"}}); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			numSubs := nc.NumSubscriptions()
			if _, err := js.PublishAsync("FOO", []byte("hello")); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(5 * time.Second):
				t.Fatalf("Did not receive completion signal")
			}

			if numSubs+1 != nc.NumSubscriptions() {
				t.Fatalf("Expected an additional subscription after publish, got %d", nc.NumSubscriptions())
			}

			js.CleanupPublisher()

			if numSubs != nc.NumSubscriptions() {
				t.Fatalf("Expected subscriptions to be back to original count")
			}
		})
	})

	t.Run("cleanup js publisher, cancel pending acks", func(t *testing.T) {
		withJSServer(t, func(t *testing.T, nc *nats.Conn) {
			cbErr := make(chan error, 10)
			js, err := nc.JetStream(nats.PublishAsyncErrHandler(func(js nats.JetStream, m *nats.Msg, err error) {
				cbErr <- err
			}))
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"FOO"}, NoAck: true}); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}

			numSubs := nc.NumSubscriptions()

			var acks []nats.PubAckFuture
			for range 10 {
				ack, err := js.PublishAsync("FOO", []byte("hello"))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}
				acks = append(acks, ack)
			}

			asyncComplete := js.PublishAsyncComplete()
			select {
			case <-asyncComplete:
				t.Fatalf("Should not complete, NoAck is set")
			case <-time.After(200 * time.Millisecond):
			}

			if numSubs+1 != nc.NumSubscriptions() {
				t.Fatalf("Expected an additional subscription after publish, got %d", nc.NumSubscriptions())
			}

			js.CleanupPublisher()

			if numSubs != nc.NumSubscriptions() {
				t.Fatalf("Expected subscriptions to be back to original count")
			}

			select {
			case <-asyncComplete:
			case <-time.After(5 * time.Second):
				t.Fatalf("Did not receive completion signal")
			}

			for _, ack := range acks {
				select {
				case err := <-ack.Err():
					if !errors.Is(err, nats.ErrJetStreamPublisherClosed) {
						t.Fatalf("Expected JetStreamContextClosed error, got %v", err)
					}
				case <-ack.Ok():
					t.Fatalf("Expected error on the ack future")
				case <-time.After(200 * time.Millisecond):
					t.Fatalf("Expected an error on the ack future")
				}
			}

			for range 10 {
				select {
				case err := <-cbErr:
					if !errors.Is(err, nats.ErrJetStreamPublisherClosed) {
						t.Fatalf("Expected JetStreamContextClosed error, got %v", err)
					}
				case <-time.After(200 * time.Millisecond):
					t.Fatalf("Expected errors to be passed from the async handler")
				}
			}
		})
	})

	t.Run("cleanup js publisher and reconnect on different goroutines", func(t *testing.T) {
		withJSServer(t, func(t *testing.T, nc *nats.Conn) {
			js, err := nc.JetStream()
			if err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if _, err := js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"FOO"}}); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			if _, err := js.PublishAsync("FOO", []byte("hello")); err != nil {
				t.Fatalf("Unexpected error: %v", err)
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(5 * time.Second):
				t.Fatalf("Did not receive completion signal")
			}

			// Not synchronized with the reconnect on purpose: -race reports
			// the publisher closing its status channel itself.
			go js.CleanupPublisher()
			time.Sleep(50 * time.Millisecond)
			forceReconnect(t, nc)
		})
	})
}

func TestJetStreamPublishExpectZero(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"test", "foo", "bar"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := nc.SubscribeSync("foo")
		if err != nil {
			t.Errorf("Error: %s", err)
		}

		_, err = js.Publish("foo", []byte("bar"),
			nats.ExpectLastSequence(0),
			nats.ExpectLastSequencePerSubject(0),
		)
		if err != nil {
			t.Errorf("Error: %v", err)
		}

		rawMsg, err := js.GetMsg("TEST", 1)
		if err != nil {
			t.Fatalf("Error: %s", err)
		}
		hdr, ok := rawMsg.Header["Nats-Expected-Last-Sequence"]
		if !ok {
			t.Fatal("Missing header")
		}
		got := hdr[0]
		expected := "0"
		if got != expected {
			t.Fatalf("Expected %v, got: %v", expected, got)
		}
		hdr, ok = rawMsg.Header["Nats-Expected-Last-Subject-Sequence"]
		if !ok {
			t.Fatal("Missing header")
		}
		got = hdr[0]
		expected = "0"
		if got != expected {
			t.Fatalf("Expected %v, got: %v", expected, got)
		}

		msg, err := sub.NextMsg(1 * time.Second)
		if err != nil {
			t.Fatalf("Error: %s", err)
		}
		hdr, ok = msg.Header["Nats-Expected-Last-Sequence"]
		if !ok {
			t.Fatal("Missing header")
		}
		got = hdr[0]
		expected = "0"
		if got != expected {
			t.Fatalf("Expected %v, got: %v", expected, got)
		}
		hdr, ok = msg.Header["Nats-Expected-Last-Subject-Sequence"]
		if !ok {
			t.Fatal("Missing header")
		}
		got = hdr[0]
		expected = "0"
		if got != expected {
			t.Fatalf("Expected %v, got: %v", expected, got)
		}
	})
}

func TestJetStreamBindConsumer(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(nil); err == nil {
			t.Fatalf("Unexpected success")
		}
		si, err := js.AddStream(&nats.StreamConfig{Name: "foo"})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if si == nil || si.Config.Name != "foo" {
			t.Fatalf("StreamInfo is not correct %+v", si)
		}

		for range 25 {
			js.Publish("foo", []byte("hi"))
		}

		_, err = js.SubscribeSync("foo", nats.Bind("", ""))
		if err != nats.ErrStreamNameRequired {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.SubscribeSync("foo", nats.Bind("foo", ""))
		if err != nats.ErrConsumerNameRequired {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.SubscribeSync("foo", nats.Bind("foo", "push"))
		if err == nil || !errors.Is(err, nats.ErrConsumerNotFound) {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.PullSubscribe("foo", "pull", nats.Bind("foo", "pull"))
		if err == nil || !errors.Is(err, nats.ErrConsumerNotFound) {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddConsumer("foo", &nats.ConsumerConfig{
			Durable:        "push",
			AckPolicy:      nats.AckExplicitPolicy,
			DeliverSubject: nats.NewInbox(),
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := js.SubscribeSync("foo", nats.Bind("foo", "push"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = js.SubscribeSync("foo", nats.Durable("push2"), nats.Bind("foo", "push"))
		if err == nil || !strings.Contains(err.Error(), `nats: duplicate consumer names (push2 and push)`) {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.SubscribeSync("foo", nats.BindStream("foo"), nats.Bind("foo2", "push"))
		if err == nil || !strings.Contains(err.Error(), `nats: duplicate stream name (foo and foo2)`) {
			t.Fatalf("Unexpected error: %v", err)
		}
		sub.Unsubscribe()

		checkConsInactive := func() {
			t.Helper()
			checkFor(t, time.Second, 15*time.Millisecond, func() error {
				ci, _ := js.ConsumerInfo("foo", "push")
				if ci != nil && !ci.PushBound {
					return nil
				}
				return fmt.Errorf("Consumer %q still active", "push")
			})
		}
		checkConsInactive()

		sub, err = js.SubscribeSync("foo", nats.BindStream("foo"), nats.Bind("foo", "push"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.SubscribeSync("foo", nats.Durable("push"))
		if err == nil || !strings.Contains(err.Error(), "already bound") {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.QueueSubscribeSync("foo", "wq", nats.Durable("push"))
		if err == nil || !strings.Contains(err.Error(), "without a deliver group") {
			t.Fatalf("Unexpected error: %v", err)
		}
		sub.Unsubscribe()
		checkConsInactive()

		_, err = js.QueueSubscribeSync("foo", "wq1", nats.Durable("qpush"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.SubscribeSync("foo", nats.Durable("qpush"))
		if err == nil || !strings.Contains(err.Error(), "cannot create a subscription for a consumer with a deliver group") {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.QueueSubscribeSync("foo", "wq2", nats.Durable("qpush"))
		if err == nil || !strings.Contains(err.Error(), "cannot create a queue subscription") {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddConsumer("foo", &nats.ConsumerConfig{
			Durable:   "pull",
			AckPolicy: nats.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.PullSubscribe("foo", "pull", nats.Bind("foo", "pull"))
		if err != nil {
			t.Fatal(err)
		}

		_, err = js.PullSubscribe("foo", "push", nats.Bind("foo", "push"))
		if err != nats.ErrPullSubscribeToPushConsumer {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = js.SubscribeSync("foo", nats.Bind("foo", "pull"))
		if err != nats.ErrPullSubscribeRequired {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub1, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		cinfo, err := sub1.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}

		_, err = js.SubscribeSync("foo", nats.Bind("foo", cinfo.Name))
		if err == nil || !strings.Contains(err.Error(), "already bound") {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub2, err := js.QueueSubscribeSync("foo", "wq3")
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		for range 25 {
			msg, err := sub2.NextMsg(time.Second)
			if err != nil {
				t.Fatalf("Error on NextMsg: %v", err)
			}
			msg.AckSync()
		}
		cinfo, _ = sub2.ConsumerInfo()
		sub3, err := js.QueueSubscribeSync("foo", "wq3", nats.Bind("foo", cinfo.Name))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		for range 100 {
			js.Publish("foo", []byte("new"))
		}
		if _, err := sub3.NextMsg(time.Second); err != nil {
			t.Fatalf("Second member failed to get a message: %v", err)
		}
	})
}

func TestJetStreamDomain(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, nc *nats.Conn, _ *testservice.Instance) {
		// JS with custom domain
		jsd, err := nc.JetStream(nats.Domain("ABC"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		info, err := jsd.AccountInfo()
		if err != nil {
			t.Error(err)
		}
		got := info.Domain
		expected := "ABC"
		if got != expected {
			t.Errorf("Got %v, expected: %v", got, expected)
		}

		if _, err = jsd.AddStream(&nats.StreamConfig{Name: "foo"}); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		jsd.Publish("foo", []byte("first"))

		if _, err = jsd.AddConsumer("foo", &nats.ConsumerConfig{Durable: "c1"}); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		sub, err := jsd.SubscribeSync("foo")
		if err != nil {
			t.Fatal(err)
		}
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = string(msg.Data)
		expected = "first"
		if got != expected {
			t.Errorf("Got %v, expected: %v", got, expected)
		}

		// JS without explicit bound domain should also work.
		js, err := nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		info, err = js.AccountInfo()
		if err != nil {
			t.Error(err)
		}
		got = info.Domain
		expected = "ABC"
		if got != expected {
			t.Errorf("Got %v, expected: %v", got, expected)
		}

		js.Publish("foo", []byte("second"))

		sub2, err := js.SubscribeSync("foo")
		if err != nil {
			t.Fatal(err)
		}
		msg, err = sub2.NextMsg(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = string(msg.Data)
		expected = "first"
		if got != expected {
			t.Errorf("Got %v, expected: %v", got, expected)
		}

		msg, err = sub2.NextMsg(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = string(msg.Data)
		expected = "second"
		if got != expected {
			t.Errorf("Got %v, expected: %v", got, expected)
		}

		// Per-request Domain option should be honored for consumer management APIs.
		ci, err := js.ConsumerInfo("foo", "c1", nats.Domain("ABC"))
		if err != nil {
			t.Fatalf("ConsumerInfo with Domain opt failed: %v", err)
		}
		if ci == nil || ci.Name != "c1" {
			t.Fatalf("Unexpected consumer info: %+v", ci)
		}
		if _, err = js.AddConsumer("foo", &nats.ConsumerConfig{Durable: "c2"}, nats.Domain("ABC")); err != nil {
			t.Fatalf("AddConsumer with Domain opt failed: %v", err)
		}
		si, err := js.StreamInfo("foo", nats.Domain("ABC"))
		if err != nil {
			t.Fatalf("StreamInfo with Domain opt failed: %v", err)
		}
		if si == nil || si.Config.Name != "foo" {
			t.Fatalf("Unexpected stream info: %+v", si)
		}
		if err = js.DeleteConsumer("foo", "c2", nats.Domain("ABC")); err != nil {
			t.Fatalf("DeleteConsumer with Domain opt failed: %v", err)
		}

		// Using different domain not configured is an error.
		jsb, err := nc.JetStream(nats.Domain("XYZ"))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		_, err = jsb.AccountInfo()
		if err != nats.ErrJetStreamNotEnabled {
			t.Errorf("Unexpected error: %v", err)
		}
	}, testservice.WithJetStream(`domain: ABC`))
}

func TestJetStreamMaxMsgsPerSubject(t *testing.T) {
	const subjectMax = 5
	msc := nats.StreamConfig{
		Name:              "TEST",
		Subjects:          []string{"foo", "bar", "baz.*"},
		Storage:           nats.MemoryStorage,
		MaxMsgsPerSubject: subjectMax,
	}
	fsc := msc
	fsc.Storage = nats.FileStorage

	cases := []struct {
		name    string
		mconfig *nats.StreamConfig
	}{
		{"MemoryStore", &msc},
		{"FileStore", &fsc},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withJSServer(t, func(t *testing.T, nc *nats.Conn) {
				js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
				if err != nil {
					t.Fatalf("Unexpected error: %v", err)
				}

				_, err = js.AddStream(c.mconfig)
				if err != nil {
					t.Fatalf("Unexpected error adding stream: %v", err)
				}
				defer js.DeleteStream(c.mconfig.Name)

				pubAndCheck := func(subj string, num int, expectedNumMsgs uint64) {
					t.Helper()
					for range num {
						if _, err = js.Publish(subj, []byte("TSLA")); err != nil {
							t.Fatalf("Unexpected publish error: %v", err)
						}
					}
					si, err := js.StreamInfo(c.mconfig.Name)
					if err != nil {
						t.Fatalf("Unexpected error: %v", err)
					}
					if si.State.Msgs != expectedNumMsgs {
						t.Fatalf("Expected %d msgs, got %d", expectedNumMsgs, si.State.Msgs)
					}
				}

				pubAndCheck("foo", 1, 1)
				pubAndCheck("foo", 4, 5)
				pubAndCheck("foo", 2, 5)
				pubAndCheck("baz.22", 5, 10)
				pubAndCheck("baz.33", 5, 15)
				pubAndCheck("baz.22", 5, 15)
				pubAndCheck("baz.33", 5, 15)

				if err := js.PurgeStream(c.mconfig.Name); err != nil {
					t.Fatalf("Unexpected purge error: %v", err)
				}
				pubAndCheck("foo", 1, 1)
				pubAndCheck("foo", 4, 5)
				pubAndCheck("baz.22", 5, 10)
				pubAndCheck("baz.33", 5, 15)
			})
		})
	}
}

func TestJetStreamDrainFailsToDeleteConsumer(t *testing.T) {
	c := newTester(t)
	inst := c.CreateServer(t, true)
	t.Cleanup(func() { inst.Destroy(t) })

	errCh := make(chan error, 1)
	nc := dialInstance(t, inst, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errCh <- err:
		default:
		}
	}))
	c.WaitForJetStream(t, nc)

	js, err := nc.JetStream()
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	if _, err := js.AddStream(&nats.StreamConfig{
		Name:     "TEST",
		Subjects: []string{"foo"},
	}); err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	js.Publish("foo", []byte("hi"))

	blockCh := make(chan struct{})
	sub, err := js.Subscribe("foo", func(m *nats.Msg) {
		<-blockCh
	}, nats.Durable("dur"))
	if err != nil {
		t.Fatalf("Error subscribing: %v", err)
	}

	sub.Drain()

	if err := js.DeleteConsumer("TEST", "dur"); err != nil {
		t.Fatalf("Error deleting consumer: %v", err)
	}

	close(blockCh)

	select {
	case err := <-errCh:
		if !strings.Contains(err.Error(), "consumer not found") {
			t.Fatalf("Unexpected async error: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Did not get async error")
	}
}

func TestJetStreamDomainInPubAck(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream()
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		cfg := &nats.StreamConfig{
			Name:     "TEST",
			Storage:  nats.MemoryStorage,
			Subjects: []string{"foo"},
		}
		if _, err := js.AddStream(cfg); err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		pa, err := js.Publish("foo", []byte("msg"))
		if err != nil {
			t.Fatalf("Error on publish: %v", err)
		}
		if pa.Domain != "HUB" {
			t.Fatalf("Expected PubAck to have domain of %q, got %q", "HUB", pa.Domain)
		}
	}, testservice.WithJetStream(`domain: "HUB"`))
}

func TestJetStreamStreamAndConsumerDescription(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		streamDesc := "stream description"
		si, err := js.AddStream(&nats.StreamConfig{
			Name:        "TEST",
			Description: streamDesc,
			Subjects:    []string{"foo"},
		})
		if err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}
		if si.Config.Description != streamDesc {
			t.Fatalf("Invalid description: %q vs %q", streamDesc, si.Config.Description)
		}

		consDesc := "consumer description"
		ci, err := js.AddConsumer("TEST", &nats.ConsumerConfig{
			Description:    consDesc,
			Durable:        "dur",
			DeliverSubject: "bar",
		})
		if err != nil {
			t.Fatalf("Error adding consumer: %v", err)
		}
		if ci.Config.Description != consDesc {
			t.Fatalf("Invalid description: %q vs %q", consDesc, ci.Config.Description)
		}
	})
}

func TestJetStreamMsgSubjectRewrite(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		if _, err := js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo"},
		}); err != nil {
			t.Fatalf("Error adding stream: %v", err)
		}

		sub, err := nc.SubscribeSync(nats.NewInbox())
		if err != nil {
			t.Fatalf("Error on subscribe: %v", err)
		}
		if _, err := js.AddConsumer("TEST", &nats.ConsumerConfig{
			DeliverSubject: sub.Subject,
			DeliverPolicy:  nats.DeliverAllPolicy,
		}); err != nil {
			t.Fatalf("Error adding consumer: %v", err)
		}

		if _, err := js.Publish("foo", []byte("msg")); err != nil {
			t.Fatalf("Error on publish: %v", err)
		}

		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatalf("Did not get message: %v", err)
		}
		if msg.Subject != "foo" {
			t.Fatalf("Subject should be %q, got %q", "foo", msg.Subject)
		}
		if string(msg.Data) != "msg" {
			t.Fatalf("Unexpected data: %q", msg.Data)
		}
	})
}

func TestJetStreamPullSubscribeFetchContext(t *testing.T) {
	c := newTester(t)
	inst := c.CreateCluster(t, 3, true)
	t.Cleanup(func() { inst.Destroy(t) })

	nc := dialInstance(t, inst)
	c.WaitForJetStream(t, nc)
	waitForJSCluster(t, nc)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}

	subject := "WQ"
	_, err = js.AddStream(&nats.StreamConfig{
		Name:     subject,
		Replicas: 3,
	})
	if err != nil {
		t.Fatal(err)
	}

	sendMsgs := func(t *testing.T, totalMsgs int) {
		t.Helper()
		for i := range totalMsgs {
			payload := fmt.Sprintf("i:%d", i)
			if _, err := js.Publish(subject, []byte(payload)); err != nil {
				t.Errorf("Unexpected error: %v", err)
			}
		}
	}
	expected := 10
	sendMsgs(t, expected)

	sub, err := js.PullSubscribe(subject, "batch-ctx")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	t.Run("ctx background", func(t *testing.T) {
		_, err = sub.Fetch(expected, nats.Context(context.Background()))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if err != nats.ErrNoDeadlineContext {
			t.Errorf("Expected context deadline error, got: %v", err)
		}
	})

	t.Run("ctx canceled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cancel()

		_, err = sub.Fetch(expected, nats.Context(ctx))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if err != context.Canceled {
			t.Errorf("Expected context deadline error, got: %v", err)
		}

		ctx, cancel = context.WithCancel(context.Background())
		cancel()

		_, err = sub.Fetch(expected, nats.Context(ctx))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if err != context.Canceled {
			t.Errorf("Expected context deadline error, got: %v", err)
		}
	})

	t.Run("ctx timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		msgs, err := sub.Fetch(expected, nats.Context(ctx))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		got := len(msgs)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}
		info, err := sub.ConsumerInfo()
		if err != nil {
			t.Error(err)
		}
		if info.NumAckPending != expected {
			t.Errorf("Expected %d pending acks, got: %d", expected, info.NumAckPending)
		}

		for _, msg := range msgs {
			msg.AckSync()
		}

		info, err = sub.ConsumerInfo()
		if err != nil {
			t.Error(err)
		}
		if info.NumAckPending > 0 {
			t.Errorf("Expected no pending acks, got: %d", info.NumAckPending)
		}

		ctx, cancel = context.WithTimeout(ctx, 250*time.Millisecond)
		defer cancel()

		_, err = sub.Fetch(1, nats.Context(ctx))
		if err != context.DeadlineExceeded {
			t.Errorf("Expected deadline exceeded fetching next message, got: %v", err)
		}

		expected = 5
		sendMsgs(t, expected)

		ctx, cancel = context.WithTimeout(context.Background(), 1*time.Second)
		defer cancel()

		msgs, err = sub.Fetch(1, nats.Context(ctx))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		if len(msgs) != 1 {
			t.Fatalf("Expected to receive a single message, got: %d", len(msgs))
		}
		for _, msg := range msgs {
			msg.Ack()
		}

		expected = 4
		msgs, err = sub.Fetch(expected, nats.Context(ctx))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}
		got = len(msgs)
		if got != expected {
			t.Fatalf("Got %v messages, expected at least: %v", got, expected)
		}
		for _, msg := range msgs {
			msg.AckSync()
		}

		info, err = sub.ConsumerInfo()
		if err != nil {
			t.Error(err)
		}
		if info.NumAckPending > 0 {
			t.Errorf("Expected no pending acks, got: %d", info.NumAckPending)
		}
	})

	t.Run("ctx with cancel", func(t *testing.T) {
		js, err = nc.JetStream(nats.MaxWait(2 * time.Second))
		if err != nil {
			t.Fatal(err)
		}

		sub, err := js.PullSubscribe(subject, "batch-cancel-ctx")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		info, err := sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}
		total := info.NumPending

		msgs, err := sub.Fetch(1, nats.Context(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Fatalf("Expected a message, got: %d", len(msgs))
		}
		for _, msg := range msgs {
			msg.AckSync()
		}

		expected := int(total - 1)
		msgs, err = sub.Fetch(expected, nats.Context(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != expected {
			t.Fatalf("Expected %d messages, got: %d", expected, len(msgs))
		}
		for _, msg := range msgs {
			msg.AckSync()
		}

		_, err = sub.Fetch(expected, nats.Context(ctx))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if err != context.DeadlineExceeded {
			t.Fatalf("Expected deadline exceeded fetching next message, got: %v", err)
		}

		if ctx.Err() != nil {
			t.Fatalf("Expected no errors in original cancellation context, got: %v", ctx.Err())
		}

		sendMsgs(t, 5)

		var pending uint64 = 4
		msgs, err = sub.Fetch(1, nats.Context(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Fatalf("Expected a message, got: %d", len(msgs))
		}
		for _, msg := range msgs {
			msg.AckSync()
		}

		cancel()

		_, err = sub.Fetch(1, nats.Context(ctx))
		if err == nil {
			t.Fatal("Unexpected success")
		}
		if err != context.Canceled {
			t.Fatalf("Expected deadline exceeded fetching next message, got: %v", err)
		}

		info, err = sub.ConsumerInfo()
		if err != nil {
			t.Fatal(err)
		}
		total = info.NumPending
		if total != pending {
			t.Errorf("Expected %d pending messages, got: %d", pending, total)
		}
	})

	t.Run("MaxWait timeout should return nats error", func(t *testing.T) {
		_, err := sub.Fetch(1, nats.MaxWait(1*time.Nanosecond))
		if !errors.Is(err, nats.ErrTimeout) {
			t.Fatalf("Expect ErrTimeout, got err=%#v", err)
		}
	})

	t.Run("Context timeout should return context error", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 1*time.Nanosecond)
		defer cancel()
		_, err := sub.Fetch(1, nats.Context(ctx))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Expect context.DeadlineExceeded, got err=%#v", err)
		}
	})
}

func TestJetStreamSubscribeContextCancel(t *testing.T) {
	withJSServer(t, func(t *testing.T, nc *nats.Conn) {
		js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		_, err = js.AddStream(&nats.StreamConfig{
			Name:     "TEST",
			Subjects: []string{"foo", "bar", "baz", "foo.*"},
		})
		if err != nil {
			t.Fatalf("Unexpected error: %v", err)
		}

		toSend := 100
		for range toSend {
			js.Publish("bar", []byte("foo"))
		}

		t.Run("cancel unsubscribes and deletes ephemeral", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			ch := make(chan *nats.Msg, 100)
			sub, err := js.Subscribe("bar", func(msg *nats.Msg) {
				ch <- msg

				if len(ch) >= 50 {
					cancel()
				}
			}, nats.Context(ctx))
			if err != nil {
				t.Fatal(err)
			}

			select {
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
				t.Fatal("Timed out waiting for context to be canceled")
			}

			checkFor(t, 2*time.Second, 15*time.Millisecond, func() error {
				info, err := sub.ConsumerInfo()
				if err != nil && err == nats.ErrConsumerNotFound {
					return nil
				}
				return fmt.Errorf("Consumer still active, got: %v (info=%+v)", err, info)
			})

			got := len(ch)
			expected := 50
			if got < expected {
				t.Errorf("Expected to receive at least %d messages, got: %d", expected, got)
			}
		})

		t.Run("unsubscribe cancels child context", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			sub, err := js.Subscribe("bar", func(msg *nats.Msg) {}, nats.Context(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unsubscribe(); err != nil {
				t.Fatal(err)
			}

			checkFor(t, 2*time.Second, 15*time.Millisecond, func() error {
				info, err := sub.ConsumerInfo()
				if err != nil && err == nats.ErrConsumerNotFound {
					return nil
				}
				return fmt.Errorf("Consumer still active, got: %v (info=%+v)", err, info)
			})
		})
	})
}

// oscStream dials inst and creates the stream the ordered consumer tests use.
func oscStream(t *testing.T, inst *testservice.Instance, opts ...nats.Option) (*nats.Conn, nats.JetStreamContext) {
	t.Helper()
	nc := dialInstance(t, inst, opts...)
	t.Cleanup(nc.Close)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("Unexpected error: %v", err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "OSC", Subjects: []string{"osc.>"}}); err != nil {
		t.Fatalf("Error adding stream: %v", err)
	}
	return nc, js
}

// countConsumerCreates watches consumer-create traffic from a separate connection.
func countConsumerCreates(t *testing.T, inst *testservice.Instance) *atomic.Int64 {
	t.Helper()
	mon := dialInstance(t, inst)
	t.Cleanup(mon.Close)
	creates := &atomic.Int64{}
	if _, err := mon.Subscribe("$JS.API.CONSUMER.CREATE.>", func(*nats.Msg) {
		creates.Add(1)
	}); err != nil {
		t.Fatalf("Error subscribing monitor: %v", err)
	}
	if err := mon.Flush(); err != nil {
		t.Fatalf("Error flushing monitor: %v", err)
	}
	return creates
}

// publishOSC publishes n messages to the stream and waits for the acks.
func publishOSC(t *testing.T, js nats.JetStreamContext, n int) {
	t.Helper()
	publishOSCSized(t, js, n, 1)
}

func publishOSCSized(t *testing.T, js nats.JetStreamContext, n, size int) {
	t.Helper()
	payload := make([]byte, size)
	for range n {
		if _, err := js.PublishAsync("osc.a", payload); err != nil {
			t.Fatalf("Error publishing: %v", err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatalf("Timed out waiting for publishes to complete")
	}
}

// seqRecorder records delivered stream sequences in arrival order.
type seqRecorder struct {
	mu       sync.Mutex
	order    []uint64
	metaErrs []error
}

func (r *seqRecorder) add(m *nats.Msg) {
	meta, err := m.Metadata()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.metaErrs = append(r.metaErrs, err)
		return
	}
	r.order = append(r.order, meta.Sequence.Stream)
}

func (r *seqRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

// waitFor fails unless at least want messages arrive within timeout.
func (r *seqRecorder) waitFor(t *testing.T, want int, timeout time.Duration) {
	t.Helper()
	checkFor(t, timeout, 10*time.Millisecond, func() error {
		if n := r.count(); n < want {
			return fmt.Errorf("only %d of %d messages delivered", n, want)
		}
		return nil
	})
}

// readChan drains ch into the recorder until the test ends.
func (r *seqRecorder) readChan(t *testing.T, ch <-chan *nats.Msg) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case m := <-ch:
				r.add(m)
			}
		}
	}()
}

// verifyComplete asserts the whole stream arrived, in order and exactly once.
func (r *seqRecorder) verifyComplete(t *testing.T, want int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.metaErrs) != 0 {
		t.Fatalf("Got %d metadata errors, first: %v", len(r.metaErrs), r.metaErrs[0])
	}
	if len(r.order) != want {
		t.Fatalf("Expected %d messages, got %d", want, len(r.order))
	}
	for i, sseq := range r.order {
		if sseq != uint64(i+1) {
			t.Fatalf("Message %d out of order: expected stream seq %d, got %d", i, i+1, sseq)
		}
	}
}

// waitForDrops fails unless the subscription actually enters slow consumer.
func waitForDrops(t *testing.T, sub *nats.Subscription) {
	t.Helper()
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if dropped, _ := sub.Dropped(); dropped == 0 {
			return fmt.Errorf("no messages dropped yet")
		}
		return nil
	})
}

// Messages dropped as slow consumer must be refetched before anything newer,
// and a reset must wait until the reader has made room for the refetch.
func TestJetStreamOrderedConsumerSlowConsumer(t *testing.T) {
	const (
		total    = 200
		buffered = 32
		msgSize  = 8 * 1024
		// Short, so that recovery through a heartbeat does not take long.
		hb = 500 * time.Millisecond
	)

	type nextFunc func(time.Duration) (*nats.Msg, error)
	readChan := func(ch chan *nats.Msg) nextFunc {
		return func(d time.Duration) (*nats.Msg, error) {
			select {
			case m := <-ch:
				return m, nil
			case <-time.After(d):
				return nil, nats.ErrTimeout
			}
		}
	}

	// Each holds exactly `buffered` messages before dropping.
	subs := []struct {
		name      string
		subscribe func(t *testing.T, js nats.JetStreamContext) (*nats.Subscription, nextFunc)
	}{
		{"Subscribe", func(t *testing.T, js nats.JetStreamContext) (*nats.Subscription, nextFunc) {
			// The callback hands each message to the reader, so the pending
			// queue holds whatever the reader has not taken yet.
			ch := make(chan *nats.Msg)
			done := make(chan struct{})
			t.Cleanup(func() { close(done) })
			sub, err := js.Subscribe("osc.>", func(m *nats.Msg) {
				select {
				case ch <- m:
				case <-done:
				}
			}, nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
			if err != nil {
				t.Fatalf("Error subscribing: %v", err)
			}
			if err := sub.SetPendingLimits(-1, buffered*msgSize); err != nil {
				t.Fatalf("Error setting pending limits: %v", err)
			}
			return sub, readChan(ch)
		}},
		{"SubscribeSync", func(t *testing.T, js nats.JetStreamContext) (*nats.Subscription, nextFunc) {
			sub, err := js.SubscribeSync("osc.>", nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
			if err != nil {
				t.Fatalf("Error subscribing: %v", err)
			}
			if err := sub.SetPendingLimits(-1, buffered*msgSize); err != nil {
				t.Fatalf("Error setting pending limits: %v", err)
			}
			return sub, sub.NextMsg
		}},
		{"ChanSubscribe", func(t *testing.T, js nats.JetStreamContext) (*nats.Subscription, nextFunc) {
			ch := make(chan *nats.Msg, buffered)
			sub, err := js.ChanSubscribe("osc.>", ch, nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
			if err != nil {
				t.Fatalf("Error subscribing: %v", err)
			}
			return sub, readChan(ch)
		}},
	}

	for _, test := range []struct {
		name             string
		publishAfterDrop bool
	}{
		{"NoSkippedMessages", true},
		{"HeartbeatRecovery", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			for _, sub := range subs {
				t.Run(sub.name, func(t *testing.T) {
					withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
						_, js := oscStream(t, inst, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
						publishOSCSized(t, js, total, msgSize)

						sub, next := sub.subscribe(t, js)
						defer sub.Unsubscribe()
						waitForDrops(t, sub)

						// Reads stream sequences from through to, inclusive.
						read := func(from, to uint64) {
							t.Helper()
							for expected := from; expected <= to; {
								msg, err := next(3 * time.Second)
								// Reported once after a drop.
								if err == nats.ErrSlowConsumer {
									continue
								}
								if err != nil {
									t.Fatalf("Stalled waiting for stream sequence %d of %d: %v", expected, to, err)
								}
								meta, err := msg.Metadata()
								if err != nil {
									t.Fatalf("Error getting metadata: %v", err)
								}
								if meta.Sequence.Stream != expected {
									t.Fatalf("Ordered consumer skipped a stream sequence: expected %d, got %d (consumer seq %d)",
										expected, meta.Sequence.Stream, meta.Sequence.Consumer)
								}
								expected++
							}
						}

						if test.publishAfterDrop {
							// The dropped messages must be redelivered before
							// the one published after them.
							read(1, buffered)
							if _, err := js.Publish("osc.a", []byte("last")); err != nil {
								t.Fatalf("Error publishing: %v", err)
							}
							read(buffered+1, total+1)
							return
						}

						consumerName := func() string {
							t.Helper()
							ci, err := sub.ConsumerInfo()
							if err != nil {
								t.Fatalf("Error getting consumer info: %v", err)
							}
							return ci.Name
						}
						first := consumerName()

						// Heartbeats report the gap while nothing is reading,
						// but a reset now would only get its refetch dropped
						// into the same full buffer, again and again. It must
						// wait until the reader has made room.
						time.Sleep(3 * hb)
						if name := consumerName(); name != first {
							t.Fatalf("Ordered consumer was recreated while the buffer was full: %q -> %q", first, name)
						}
						read(1, buffered/2-1)
						time.Sleep(2 * hb)
						if name := consumerName(); name != first {
							t.Fatalf("Ordered consumer was recreated while more than half the buffer was in use: %q -> %q", first, name)
						}
						read(buffered/2, buffered/2)
						checkFor(t, 3*time.Second, 10*time.Millisecond, func() error {
							ci, err := sub.ConsumerInfo()
							if err != nil {
								return err
							}
							if ci.Name == first {
								return fmt.Errorf("ordered consumer not recreated after making room")
							}
							return nil
						})
						read(buffered/2+1, total)
					})
				})
			}
		})
	}
}

// An unbuffered channel has no capacity signal, so a reader that is not there
// yet cannot be told apart from one that is merely busy. While nothing has
// been delivered, resets are paced by the heartbeat and everything discarded
// in the meantime counts as dropped; once a reader shows up nothing is lost.
func TestJetStreamOrderedConsumerUnbufferedChan(t *testing.T) {
	const hb = 200 * time.Millisecond

	t.Run("no reader", func(t *testing.T) {
		withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
			_, js := oscStream(t, inst, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
			creates := countConsumerCreates(t, inst)

			ch := make(chan *nats.Msg)
			sub, err := js.ChanSubscribe("osc.>", ch, nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
			if err != nil {
				t.Fatalf("Error subscribing: %v", err)
			}
			defer sub.Unsubscribe()
			baseline := creates.Load()

			// Large enough for the server to interleave flow control messages
			// with the data.
			const totalMsgs = 4000
			publishOSCSized(t, js, totalMsgs, 1024)
			waitForDrops(t, sub)

			const stallFor = time.Second
			time.Sleep(stallFor)
			// One reset per heartbeat, plus slack for a late one.
			if n, max := creates.Load()-baseline, int64(stallFor/hb)+2; n > max {
				t.Fatalf("Ordered consumer recreated %d times during a %v stall; expected at most %d", n, stallFor, max)
			}
			if dropped, _ := sub.Dropped(); dropped < totalMsgs {
				t.Fatalf("Dropped() reports %d, expected at least %d", dropped, totalMsgs)
			}
		})
	})

	t.Run("late reader", func(t *testing.T) {
		withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
			_, js := oscStream(t, inst, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
			const totalMsgs = 100
			publishOSC(t, js, totalMsgs)

			ch := make(chan *nats.Msg)
			sub, err := js.ChanSubscribe("osc.>", ch, nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
			if err != nil {
				t.Fatalf("Error subscribing: %v", err)
			}
			defer sub.Unsubscribe()
			// The whole backlog is discarded before anyone reads.
			waitForDrops(t, sub)
			time.Sleep(2 * hb)

			var rec seqRecorder
			rec.readChan(t, ch)
			rec.waitFor(t, totalMsgs, 30*time.Second)
			rec.verifyComplete(t, totalMsgs)
		})
	})
}

// A healthy ordered consumer must never be recreated by the heartbeat path: the
// heartbeat carries the server's last delivered sequence while jsi.dseq is the
// next expected one, so caught up is ldseq == jsi.dseq-1, not equality.
func TestJetStreamOrderedConsumerNoResetWhenHealthy(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
		_, js := oscStream(t, inst, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		creates := countConsumerCreates(t, inst)

		var rec seqRecorder
		sub, err := js.Subscribe("osc.>", rec.add, nats.OrderedConsumer(), nats.IdleHeartbeat(200*time.Millisecond))
		if err != nil {
			t.Fatalf("Error subscribing: %v", err)
		}
		defer sub.Unsubscribe()
		baseline := creates.Load()

		// Six heartbeats, or the absence of resets would mean nothing.
		const idleWindow = 1200 * time.Millisecond

		// Nothing delivered yet: the server reports Nats-Last-Consumer 0, jsi.dseq is 1.
		time.Sleep(idleWindow)
		// Steady state: the server's last delivered now equals jsi.dseq-1.
		const totalMsgs = 5
		publishOSC(t, js, totalMsgs)
		rec.waitFor(t, totalMsgs, 10*time.Second)
		time.Sleep(idleWindow)

		// A late heartbeat trips the activity check into one reset; the bug
		// would produce one per heartbeat.
		if n := creates.Load() - baseline; n > 1 {
			t.Fatalf("Ordered consumer recreated %d times over a healthy run; expected none", n)
		}
		rec.verifyComplete(t, totalMsgs)
	})
}

// A reset before anything was delivered must resume from the consumer's first
// message, not from the start of the stream, or the deliver policy is lost.
func TestJetStreamOrderedConsumerFirstMsgDroppedKeepsStartPosition(t *testing.T) {
	withJSServerInstance(t, func(t *testing.T, _ *nats.Conn, inst *testservice.Instance) {
		_, js := oscStream(t, inst, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		publishOSC(t, js, 100)

		// No reader yet, so the first message is dropped.
		ch := make(chan *nats.Msg)
		sub, err := js.ChanSubscribe("osc.>", ch, nats.OrderedConsumer(), nats.DeliverNew(), nats.IdleHeartbeat(200*time.Millisecond))
		if err != nil {
			t.Fatalf("Error subscribing: %v", err)
		}
		defer sub.Unsubscribe()
		if _, err := js.Publish("osc.a", []byte("x")); err != nil {
			t.Fatalf("Error publishing: %v", err)
		}
		waitForDrops(t, sub)

		var rec seqRecorder
		rec.readChan(t, ch)
		rec.waitFor(t, 1, 10*time.Second)
		// Leave time for a replay of the history to show up.
		time.Sleep(500 * time.Millisecond)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.order) != 1 || rec.order[0] != 101 {
			t.Fatalf("Expected only stream seq 101, got %v", rec.order)
		}
	})
}
