package clock

import (
	"testing"
	"time"
)

func TestRealWaitsTheDurationItIsGiven(t *testing.T) {
	for _, c := range []Clock{Real, {}, Scaled(1), Scaled(0.5), Scaled(-3)} {
		if got := c.Scale(time.Hour); got != time.Hour || c.Rate() != 1 {
			t.Errorf("%+v: an hour lasts %v at rate %v", c, got, c.Rate())
		}
	}
}

func TestAScaledClockShortensWaits(t *testing.T) {
	c := Scaled(60)
	if got := c.Scale(time.Hour); got != time.Minute {
		t.Fatalf("an hour at rate 60 lasts %v, want 1m", got)
	}
	began := time.Now()
	<-c.After(3 * time.Second)
	timer := c.NewTimer(3 * time.Second)
	<-timer.C
	if took := time.Since(began); took < 100*time.Millisecond || took > 2*time.Second {
		t.Fatalf("two 3 s waits at rate 60 took %v, want about 100 ms", took)
	}
}

func TestTheTestRateIsParsedAndBounded(t *testing.T) {
	for value, want := range map[string]float64{"": 1, "1": 1, "60": 60, "3600": 3600, "2.5": 2.5} {
		c, err := fromRate(value)
		if err != nil || c.Rate() != want {
			t.Errorf("%q: rate %v, %v; want %v", value, c.Rate(), err, want)
		}
	}
	for _, value := range []string{"0", "0.5", "-60", "3601", "NaN", "Inf", "fast"} {
		if c, err := fromRate(value); err == nil || c != Real {
			t.Errorf("%q: accepted as %+v", value, c)
		}
	}
}
