// arm_ik firmware bridge: up to 6 hobby PWM servos on an ATmega328P
// (Arduino Uno/Nano, 16 MHz) driven by a framed binary protocol over the
// UART. See ../PROTOCOL.md for the wire format and ../README.md for pins.
//
// Pulse generation (no Servo library in Debian, so it is done here):
// - ch0 = D9 (PB1, OC1A), ch1 = D10 (PB2, OC1B): Timer1 fast PWM, mode 14,
//   prescaler 8 (0.5 us tick), ICR1 = 39999 (20 ms period). The pulse is
//   OCR1A/OCR1B; the compare registers are double-buffered and updated at
//   BOTTOM, so there is no jitter and no glitch when a target changes. New
//   widths are written by the overflow interrupt, at the start of a period,
//   and an output is switched off by its compare interrupt, right after a
//   pulse ended, so no pulse is ever cut short.
// - ch2 = D3 (PD3), ch3 = D5 (PD5), ch4 = D6 (PD6), ch5 = D11 (PB3):
//   Timer2 in CTC mode, prescaler 8 (0.5 us tick), one compare ISR. The
//   four pulses are generated one after the other in a 20 ms frame (slot k
//   starts when slot k-1 ends, so two pulse ends never coincide); intervals
//   longer than the 8-bit timer are split into chunks of <= 200 ticks, the
//   last chunk >= 64 ticks so the ISR always rewrites OCR2A well before the
//   counter gets there. Both edges of a pulse come from the same timer, so
//   the width is exact apart from interrupt latency: an edge is late by the
//   time another ISR (USART RX, Timer0/millis, Timer1's width update) or a
//   cli() section holds the CPU: typically < 1 us, a few us at times (see
//   README.md for measured numbers).
#include <Arduino.h>
#include <avr/interrupt.h>
#include <util/atomic.h>

#ifndef BAUD
#define BAUD 115200
#endif
#ifndef HW_MIN_US            // absolute limits; SET_LIMITS cannot widen them
#define HW_MIN_US 500
#endif
#ifndef HW_MAX_US
#define HW_MAX_US 2500
#endif
#ifndef WATCHDOG_MS          // 0 disables the link watchdog
#define WATCHDOG_MS 500
#endif
#ifndef WATCHDOG_RELAX       // 0: hold the last pulses on timeout, 1: stop them
#define WATCHDOG_RELAX 0
#endif
#ifndef FRAME_TIMEOUT_MS     // a frame started but not finished within this is dropped
#define FRAME_TIMEOUT_MS 20
#endif

#define NCH 6
#define NSW 4                // software channels (ch2..ch5)
#define MAX_PAYLOAD 32
#define FRAME_TICKS 40000u   // 20 ms in 0.5 us ticks

enum {
    CMD_SET_TARGETS = 0x01,
    CMD_STATUS = 0x02,
    CMD_SET_LIMITS = 0x03,
    CMD_RELAX = 0x04,
    CMD_ESTOP = 0x05,
    CMD_SET_WATCHDOG = 0x06,
    REPLY = 0x80,
};
enum { RES_OK = 0, RES_BAD_ARG = 1, RES_ESTOP = 2, RES_UNKNOWN = 3 };
enum { FLAG_ESTOP = 1, FLAG_WD_TRIPPED = 2, FLAG_WD_RELAX = 4, FLAG_ACTIVE = 8 };

// ---- state ---------------------------------------------------------------
static uint16_t lim_min[NCH], lim_max[NCH];
static uint16_t width_us[NCH];          // what is output now; 0 = no pulse
static volatile uint16_t sw_ticks[NSW]; // read by the Timer2 ISR; 0 = off

static uint8_t estop, wd_tripped, wd_relax = WATCHDOG_RELAX, last_target_seq;
static uint16_t wd_timeout_ms = WATCHDOG_MS;
static uint32_t last_valid_ms;
static uint16_t n_bad_crc, n_bad_len, n_garbage, n_frame_timeouts, n_wd_trips, n_ok;

// ---- CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, xorout 0
static uint16_t crc16_update(uint16_t crc, uint8_t b) {
    crc ^= (uint16_t)b << 8;
    for (uint8_t i = 0; i < 8; i++)
        crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    return crc;
}

// ---- outputs ---------------------------------------------------------------
// Timer1 (ch0 on OC1A, ch1 on OC1B). In fast PWM the output is high from
// BOTTOM through the compare match, i.e. for OCR1x + 1 ticks: the compare
// value for `us` is 2 * us - 1 (us >= 500, clamped before).
//
// Every change happens where it cannot cut or stretch a pulse:
// - a new width, or an output switched on, is applied by the overflow
//   interrupt just after BOTTOM; the chip latches OCR1x at the next BOTTOM
//   (double buffering) and drives the pin from that BOTTOM on;
// - an output is switched off by its compare interrupt, just after its
//   pulse ended (disconnecting OC1x during a pulse would cut it: a twitch).
// simavr 1.6 models mode 14 as phase-correct PWM, whose OCR1x writes it only
// stores: it takes a compare value when the timer clock is started, and
// restarts the period then. So the overflow interrupt writes OCR1x with the
// clock stopped and puts TCNT1 back where it was: on the chip that costs
// at most a tick (0.5 us) of one period, in simavr it keeps the phase.
#define T1_A 1
#define T1_B 2
// Instruction time between reading TCNT1 and writing it back, in timer
// ticks (8 cycles), so the period goes on where it was. Measured in simavr
// with a width changed every frame: each period within -0.7..+1.1 us of
// 20 ms (mean +0.06 us); 2 ticks gave +1.5 us per update. On the chip the
// clock only stops for a few cycles, so the update shortens that one
// period by a tick or two (<= 1 us): nothing a servo notices.
#define T1_RESUME_TICKS 5
static volatile uint16_t t1_ocr[2];   // compare values waiting for BOTTOM
static volatile uint8_t t1_load;      // T1_A | T1_B: load them (and connect)

ISR(TIMER1_OVF_vect) {
    uint8_t load = t1_load;
    t1_load = 0;
    TIMSK1 &= ~_BV(TOIE1);             // enabled only while a load waits
    uint16_t t = TCNT1;
    TCCR1B = _BV(WGM13) | _BV(WGM12);
    if (load & T1_A) OCR1A = t1_ocr[0];
    if (load & T1_B) OCR1B = t1_ocr[1];
    TCCR1B = _BV(WGM13) | _BV(WGM12) | _BV(CS11);
    TCNT1 = t + T1_RESUME_TICKS;
    TCCR1A |= ((load & T1_A) ? _BV(COM1A1) : 0) | ((load & T1_B) ? _BV(COM1B1) : 0);
}

ISR(TIMER1_COMPA_vect) {
    TCCR1A &= ~_BV(COM1A1);
    TIMSK1 &= ~_BV(OCIE1A);
}

ISR(TIMER1_COMPB_vect) {
    TCCR1A &= ~_BV(COM1B1);
    TIMSK1 &= ~_BV(OCIE1B);
}

// Schedules a Timer1 output change (`bit` T1_A or T1_B; 0 us = off).
static void t1_apply(uint8_t bit, uint16_t us) {
    uint8_t com = bit == T1_A ? _BV(COM1A1) : _BV(COM1B1);
    uint8_t ocie = bit == T1_A ? _BV(OCIE1A) : _BV(OCIE1B); // = OCF1x in TIFR1
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        if (us) {
            TIMSK1 &= ~ocie;           // cancels a stop not yet done
            t1_ocr[bit == T1_A ? 0 : 1] = us * 2 - 1;
            if (!t1_load) {
                TIFR1 = _BV(TOV1);      // a stale flag would fire mid-period
                TIMSK1 |= _BV(TOIE1);
            }
            t1_load |= bit;
        } else {
            t1_load &= ~bit;
            if (!t1_load) TIMSK1 &= ~_BV(TOIE1);
            if (TCCR1A & com) {
                uint16_t ocr = bit == T1_A ? OCR1A : OCR1B;
                if (TCNT1 >= ocr) {
                    // This period's pulse has ended and the pin is low
                    // until BOTTOM: off now. Waiting for the next match
                    // would let one more whole pulse out, 20 ms late.
                    TCCR1A &= ~com;
                    TIMSK1 &= ~ocie;
                } else {
                    TIFR1 = ocie;       // the pulse in progress ends at its
                    TIMSK1 |= ocie;     // match, not at an old one's flag
                }
            }
        }
    }
}

// Streaming hosts resend the same widths every frame: only a change is
// applied, so a steady command never touches the timers.
static void apply_channel(uint8_t ch, uint16_t us) {
    if (us == width_us[ch]) return;
    width_us[ch] = us;
    if (ch == 0) t1_apply(T1_A, us);
    else if (ch == 1) t1_apply(T1_B, us);
    else ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { sw_ticks[ch - 2] = us * 2; }
}

static uint16_t clamp_ch(uint8_t ch, uint16_t us) {
    if (us == 0) return 0;
    if (us < lim_min[ch]) return lim_min[ch];
    if (us > lim_max[ch]) return lim_max[ch];
    return us;
}

static void all_off(void) {
    for (uint8_t ch = 0; ch < NCH; ch++) apply_channel(ch, 0);
}

// Timer2 sequencer: segments 0..3 are the software channels' pulses,
// segment 4 is the rest of the 20 ms frame. At the end of a segment one
// write per port clears the pin of the pulse that ends and sets the pin of
// the one that starts, from masks prepared in the previous interrupt, so
// both edges of a pulse come from the same instruction at the same delay
// after the compare match and the width is exact to the cycle (unless
// another interrupt delays one of the two edges).
static uint8_t t2_slot = NSW;
static uint16_t t2_remaining, t2_used, t2_next;
static uint8_t m_clr_b, m_clr_d, m_set_b, m_set_d;

static inline void slot_mask(uint8_t slot, uint8_t *b, uint8_t *d) {
    switch (slot) {
    case 0: *d |= _BV(PD3); break;
    case 1: *d |= _BV(PD5); break;
    case 2: *d |= _BV(PD6); break;
    default: *b |= _BV(PB3); break;
    }
}

static inline void t2_schedule(void) {
    uint16_t c = t2_remaining;
    if (c >= 256) { c -= 64; if (c > 200) c = 200; }
    OCR2A = (uint8_t)(c - 1);
    t2_remaining -= c;
}

ISR(TIMER2_COMPA_vect) {
    if (t2_remaining) { t2_schedule(); return; }
    PORTD = (PORTD & ~m_clr_d) | m_set_d;
    PORTB = (PORTB & ~m_clr_b) | m_set_b;
    if (++t2_slot > NSW) { t2_slot = 0; t2_used = 0; }
    m_clr_b = m_clr_d = m_set_b = m_set_d = 0;
    if (t2_slot < NSW) {
        uint16_t t = t2_next;                 // its pin went high just now
        if (t) slot_mask(t2_slot, &m_clr_b, &m_clr_d);
        else t = 200;                         // idle slot: 100 us gap
        t2_remaining = t;
        t2_used += t;
    } else {
        t2_remaining = FRAME_TICKS - t2_used;
    }
    uint8_t nslot = t2_slot < NSW ? t2_slot + 1 : 0;
    t2_next = nslot < NSW ? sw_ticks[nslot] : 0;
    if (t2_next) slot_mask(nslot, &m_set_b, &m_set_d);
    t2_schedule();
}

static void pwm_init(void) {
    DDRB |= _BV(PB1) | _BV(PB2) | _BV(PB3);
    DDRD |= _BV(PD3) | _BV(PD5) | _BV(PD6);
    PORTB &= ~(_BV(PB1) | _BV(PB2) | _BV(PB3));
    PORTD &= ~(_BV(PD3) | _BV(PD5) | _BV(PD6));
    // Timer1: fast PWM, TOP = ICR1 (mode 14), clk/8; outputs connected per channel.
    // TOP is written before the clock is started (simavr computes the
    // period when TCCR1B is written; on hardware the order is harmless).
    TCCR1B = 0;
    TCCR1A = _BV(WGM11);
    ICR1 = FRAME_TICKS - 1;
    OCR1A = OCR1B = 3000;
    TCNT1 = 0;
    TCCR1B = _BV(WGM13) | _BV(WGM12) | _BV(CS11);
    // Timer2: CTC (TOP = OCR2A), clk/8, compare A interrupt. The core's
    // init() set it up for analogWrite on pins 3/11; that is overridden here.
    TCCR2A = _BV(WGM21);
    TCCR2B = _BV(CS21);
    TCNT2 = 0;
    t2_remaining = 0;
    OCR2A = 199;
    TIMSK2 = _BV(OCIE2A);
}

// ---- replies ---------------------------------------------------------------
static void send_frame(uint8_t seq, uint8_t cmd, const uint8_t *p, uint8_t n) {
    uint8_t hdr[5] = {0xA5, 0x5A, n, seq, cmd};
    uint16_t crc = 0xFFFF;
    for (uint8_t i = 2; i < 5; i++) crc = crc16_update(crc, hdr[i]);
    for (uint8_t i = 0; i < n; i++) crc = crc16_update(crc, p[i]);
    Serial.write(hdr, 5);
    if (n) Serial.write(p, n);
    Serial.write((uint8_t)(crc & 0xFF));
    Serial.write((uint8_t)(crc >> 8));
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v & 0xFF; p[1] = v >> 8; }
static uint16_t get16(const uint8_t *p) { return p[0] | ((uint16_t)p[1] << 8); }

static void send_ack(uint8_t seq, uint8_t cmd, uint8_t res) { send_frame(seq, cmd | REPLY, &res, 1); }

static void send_status(uint8_t seq) {
    uint8_t p[30];
    uint8_t flags = (estop ? FLAG_ESTOP : 0) | (wd_tripped ? FLAG_WD_TRIPPED : 0) |
                    (wd_relax ? FLAG_WD_RELAX : 0);
    for (uint8_t ch = 0; ch < NCH; ch++) if (width_us[ch]) flags |= FLAG_ACTIVE;
    p[0] = flags;
    p[1] = last_target_seq;
    put16(p + 2, n_bad_crc);
    put16(p + 4, n_bad_len);
    put16(p + 6, n_garbage);
    put16(p + 8, n_frame_timeouts);
    put16(p + 10, n_wd_trips);
    put16(p + 12, n_ok);
    uint32_t up = millis();
    p[14] = up; p[15] = up >> 8; p[16] = up >> 16; p[17] = up >> 24;
    for (uint8_t ch = 0; ch < NCH; ch++) put16(p + 18 + 2 * ch, width_us[ch]);
    send_frame(seq, CMD_STATUS | REPLY, p, sizeof p);
}

// ---- commands ----------------------------------------------------------------
static void handle(uint8_t seq, uint8_t cmd, const uint8_t *p, uint8_t n) {
    static const uint8_t expected_len[] = {0xFF, 2 * NCH, 0, 5, 1, 1, 3};
    if (cmd == 0 || cmd >= sizeof expected_len) {
        send_ack(seq, cmd, RES_UNKNOWN);
        return;
    }
    if (n != expected_len[cmd]) { n_bad_len++; return; }
    n_ok++;
    last_valid_ms = millis();
    wd_tripped = 0;
    switch (cmd) {
    case CMD_SET_TARGETS:
        if (estop) return; // visible in the status flags
        last_target_seq = seq;
        for (uint8_t ch = 0; ch < NCH; ch++) apply_channel(ch, clamp_ch(ch, get16(p + 2 * ch)));
        break;
    case CMD_STATUS:
        send_status(seq);
        break;
    case CMD_SET_LIMITS: {
        uint8_t ch = p[0];
        uint16_t lo = get16(p + 1), hi = get16(p + 3);
        if (lo < HW_MIN_US) lo = HW_MIN_US;
        if (hi > HW_MAX_US) hi = HW_MAX_US;
        if (ch >= NCH || lo > hi) { send_ack(seq, cmd, RES_BAD_ARG); break; }
        lim_min[ch] = lo;
        lim_max[ch] = hi;
        if (width_us[ch]) apply_channel(ch, clamp_ch(ch, width_us[ch]));
        send_ack(seq, cmd, RES_OK);
        break;
    }
    case CMD_RELAX:
        for (uint8_t ch = 0; ch < NCH; ch++) if (p[0] & (1 << ch)) apply_channel(ch, 0);
        send_ack(seq, cmd, RES_OK);
        break;
    case CMD_ESTOP:
        if (p[0] > 1) { send_ack(seq, cmd, RES_BAD_ARG); break; }
        estop = p[0];
        if (estop) all_off();
        send_ack(seq, cmd, RES_OK);
        break;
    case CMD_SET_WATCHDOG:
        if (p[2] > 1) { send_ack(seq, cmd, RES_BAD_ARG); break; }
        wd_timeout_ms = get16(p);
        wd_relax = p[2];
        send_ack(seq, cmd, RES_OK);
        break;
    }
}

// ---- receive state machine ------------------------------------------------------
enum { S_SYNC1, S_SYNC2, S_LEN, S_SEQ, S_CMD, S_PAYLOAD, S_CRC_LO, S_CRC_HI };
static uint8_t rx_state = S_SYNC1, rx_len, rx_seq, rx_cmd, rx_pos, rx_crc_lo;
static uint8_t rx_buf[MAX_PAYLOAD];
static uint16_t rx_crc;
static uint32_t rx_started_ms;

static void rx_byte(uint8_t b) {
    switch (rx_state) {
    case S_SYNC1:
        if (b == 0xA5) { rx_state = S_SYNC2; rx_started_ms = millis(); }
        else n_garbage++;
        break;
    case S_SYNC2:
        if (b == 0x5A) { rx_state = S_LEN; rx_crc = 0xFFFF; }
        else if (b == 0xA5) n_garbage++;          // the earlier 0xA5 was garbage
        else { n_garbage += 2; rx_state = S_SYNC1; }
        break;
    case S_LEN:
        if (b > MAX_PAYLOAD) { n_bad_len++; rx_state = S_SYNC1; break; }
        rx_len = b; rx_crc = crc16_update(rx_crc, b); rx_state = S_SEQ;
        break;
    case S_SEQ:
        rx_seq = b; rx_crc = crc16_update(rx_crc, b); rx_state = S_CMD;
        break;
    case S_CMD:
        rx_cmd = b; rx_crc = crc16_update(rx_crc, b); rx_pos = 0;
        rx_state = rx_len ? S_PAYLOAD : S_CRC_LO;
        break;
    case S_PAYLOAD:
        rx_buf[rx_pos++] = b; rx_crc = crc16_update(rx_crc, b);
        if (rx_pos == rx_len) rx_state = S_CRC_LO;
        break;
    case S_CRC_LO:
        rx_crc_lo = b; rx_state = S_CRC_HI;
        break;
    case S_CRC_HI:
        rx_state = S_SYNC1;
        if ((rx_crc_lo | ((uint16_t)b << 8)) != rx_crc) { n_bad_crc++; break; }
        handle(rx_seq, rx_cmd, rx_buf, rx_len);
        break;
    }
}

void setup() {
    for (uint8_t ch = 0; ch < NCH; ch++) { lim_min[ch] = HW_MIN_US; lim_max[ch] = HW_MAX_US; }
    pwm_init();          // outputs stay low until the first SET_TARGETS
    Serial.begin(BAUD);
    last_valid_ms = millis();
}

void loop() {
    int c;
    while ((c = Serial.read()) >= 0) rx_byte((uint8_t)c);
    uint32_t now = millis();
    if (rx_state != S_SYNC1 && now - rx_started_ms > FRAME_TIMEOUT_MS) {
        n_frame_timeouts++;
        rx_state = S_SYNC1;
    }
    if (wd_timeout_ms && !wd_tripped && now - last_valid_ms > wd_timeout_ms) {
        wd_tripped = 1;
        n_wd_trips++;
        if (wd_relax) all_off();
    }
}
