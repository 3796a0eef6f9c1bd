/*
 * Simulation harness for the firmware bridge, on libsimavr (simavr 1.6).
 *
 *   harness [--realtime] [--pulses FILE] [--reset-on-open MS] [--mcu atmega328p]
 *           [--freq 16000000] FIRMWARE.elf
 *
 * - Runs the ELF (Arduino ELFs carry no .mmcu section, so the MCU name and
 *   frequency are set after loading).
 * - Bridges UART0 to a pseudo-terminal: openpty + cfmakeraw, the slave kept
 *   open here (so the host may close and reopen it without EIO on the
 *   master). Host bytes are fed to the simulated UART only while simavr
 *   signals XON (its input FIFO has room) and only once the firmware has
 *   set RXEN0 (earlier bytes would be dropped by simavr), so nothing the
 *   host writes is lost. Single-threaded: the pty is polled from the
 *   simulation loop.
 * - Prints "PTY <path>" as the first line on stdout.
 * - Measures the pulse width of every servo pin from its edges, timed in
 *   CPU cycles (simulated time), and prints one JSON line per pulse:
 *     {"ch":0,"width_us":1500.0,"t_sim":1.234567}
 *   (t_sim in seconds at the falling edge) plus {"t_sim":x} every 100 ms of
 *   simulated time so a reader can tell "no pulses" from "no news", and
 *   {"rx":"a55a...","t_sim":x} for the bytes the host wrote, in hex, when
 *   they start to reach the UART (a frame's arrival time). To
 *   stdout, or to FILE with --pulses (line-buffered).
 * - --realtime paces simulated time to the wall clock (free-running it is
 *   several times faster).
 * - --reset-on-open MS: the board an Uno or a Nano is on USB, whose adapter
 *   resets the MCU when a program opens the port (DTR wired to RESET).
 *   Each open of the pty by another process (inotify) resets the
 *   simulated MCU and holds it in a boot loader for MS ms of wall clock:
 *   no pulses, and what the host writes meanwhile is eaten (optiboot
 *   takes it for upload traffic). An open during the boot starts it over.
 *   Logged as {"reset":true,"t_sim":x}. The firmware then starts afresh
 *   (setup(), no pulses until its first SET_TARGETS). Simulated time runs
 *   on through the boot: t_sim never goes back.
 * - SIGUSR1 resets the MCU as the reset button does (with the boot
 *   loader of --reset-on-open, if given).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <sim_avr.h>
#include <sim_elf.h>
#include <sim_io.h>
#include <sim_irq.h>
#include <avr_ioport.h>
#include <avr_timer.h>
#include <avr_uart.h>

#define UCSR0B 0xC1
#define RXEN0 4

/* channel -> port/bit: ch0 D9=PB1, ch1 D10=PB2, ch2 D3=PD3, ch3 D5=PD5,
 * ch4 D6=PD6, ch5 D11=PB3 */
static const struct { char port; int bit; } pins[] = {
    {'B', 1}, {'B', 2}, {'D', 3}, {'D', 5}, {'D', 6}, {'B', 3},
};
#define NCH (int)(sizeof pins / sizeof pins[0])

static avr_t *avr;
/* cycles simulated before the last reset (simavr may count from 0 again
 * after one): now() is simulated time that never goes back */
static avr_cycle_count_t cycles_before;
static FILE *pulses;
static int pty_master = -1;
static int xoff;
static avr_cycle_count_t rise[NCH];
static int level[NCH];
static volatile sig_atomic_t stop;

static avr_cycle_count_t now_cycles(void) { return cycles_before + avr->cycle; }

static void on_pin(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    int ch = (int)(intptr_t)param;
    int v = value ? 1 : 0;
    if (v == level[ch]) return;
    level[ch] = v;
    if (v) {
        rise[ch] = now_cycles();
    } else if (rise[ch]) {
        double w = (double)(now_cycles() - rise[ch]) * 1e6 / avr->frequency;
        fprintf(pulses, "{\"ch\":%d,\"width_us\":%.2f,\"t_sim\":%.6f}\n", ch, w,
                (double)now_cycles() / avr->frequency);
    }
}

/* host -> firmware bytes as read from the pty, in hex, with the
 * simulated time they start to reach the UART: a reader decodes the
 * host's frames and knows when each arrived */
static void log_rx(const unsigned char *bytes, int n, double t) {
    fprintf(pulses, "{\"rx\":\"");
    for (int i = 0; i < n; i++) fprintf(pulses, "%02x", bytes[i]);
    fprintf(pulses, "\",\"t_sim\":%.6f}\n", t);
}

/* firmware -> host; a host that does not read loses bytes rather than
 * stalling the simulation */
static unsigned long tx_dropped;
static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)param;
    uint8_t b = (uint8_t)value;
    if (write(pty_master, &b, 1) != 1) tx_dropped++;
}
static void on_xon(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)value; (void)param;
    xoff = 0;
}
static void on_xoff(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)value; (void)param;
    xoff = 1;
}

static void on_signal(int s) { (void)s; stop = 1; }
/* SIGUSR1: the reset button (or a brown-out); the boot loader runs too */
static volatile sig_atomic_t reset_pressed;
static void on_reset(int s) { (void)s; reset_pressed = 1; }

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* host bytes read from the pty, not yet handed to the UART */
static uint8_t pending[256];
static int npend, ppos;

/* --reset-on-open: inotify on the pty's slave, and the boot's length */
static int opens_fd = -1;
static int boot_ms;

/* true when another process opened the pty since the last call */
static int pty_opened(void) {
    if (opens_fd < 0) return 0;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int opened = 0;
    ssize_t n;
    while ((n = read(opens_fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            if (e->mask & IN_OPEN) opened = 1;
            p += sizeof *e + e->len;
        }
    }
    return opened;
}

/* The boot loader's time (none without --reset-on-open): the host's
 * bytes are eaten, an open starts it over; simulated time runs on by the
 * wall-clock time it took. */
static void boot_loader(void) {
    double start = wall_now(), until = start + boot_ms * 1e-3;
    unsigned char eaten[256];
    while (!stop && wall_now() < until) {
        while (read(pty_master, eaten, sizeof eaten) > 0) {}
        if (pty_opened()) until = wall_now() + boot_ms * 1e-3;
        usleep(1000);
    }
    cycles_before += (avr_cycle_count_t)((wall_now() - start) * avr->frequency);
}

/* The adapter's DTR pulse: the MCU resets (a pulse in progress is cut,
 * not measured), the boot loader runs, then the firmware starts afresh. */
static void reset_board(void) {
    avr_cycle_count_t c = avr->cycle;
    avr_reset(avr);
    cycles_before += c - avr->cycle;
    for (int ch = 0; ch < NCH; ch++) level[ch] = 0, rise[ch] = 0;
    xoff = 0;
    npend = ppos = 0;
    fprintf(pulses, "{\"reset\":true,\"t_sim\":%.6f}\n", (double)now_cycles() / avr->frequency);
    boot_loader();
}

int main(int argc, char **argv) {
    int realtime = 0;
    const char *pulses_path = NULL, *mcu = "atmega328p", *elf = NULL;
    uint32_t freq = 16000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--realtime")) realtime = 1;
        else if (!strcmp(argv[i], "--pulses") && i + 1 < argc) pulses_path = argv[++i];
        else if (!strcmp(argv[i], "--reset-on-open") && i + 1 < argc) boot_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mcu") && i + 1 < argc) mcu = argv[++i];
        else if (!strcmp(argv[i], "--freq") && i + 1 < argc) freq = (uint32_t)atol(argv[++i]);
        else if (argv[i][0] != '-' && !elf) elf = argv[i];
        else {
            fprintf(stderr, "usage: %s [--realtime] [--pulses FILE] [--reset-on-open MS] [--mcu NAME] [--freq HZ] FIRMWARE.elf\n", argv[0]);
            return 2;
        }
    }
    if (!elf) { fprintf(stderr, "harness: no firmware ELF given\n"); return 2; }

    /* simavr's loader logs to stdout; "PTY <path>" must be the first line
     * there, so its messages go to stderr */
    fflush(stdout);
    int saved_stdout = dup(1);
    dup2(2, 1);
    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf, &fw) != 0) { fprintf(stderr, "harness: cannot read %s\n", elf); return 1; }
    snprintf(fw.mmcu, sizeof fw.mmcu, "%s", mcu); /* Arduino ELFs carry no .mmcu */
    fw.frequency = freq;
    avr = avr_make_mcu_by_name(fw.mmcu);
    if (!avr) { fprintf(stderr, "harness: unknown MCU %s\n", fw.mmcu); return 1; }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    avr->frequency = freq;
    avr->log = 1;
    fflush(stdout);
    dup2(saved_stdout, 1);
    close(saved_stdout);

    /* pty */
    int slave;
    if (openpty(&pty_master, &slave, NULL, NULL, NULL) < 0) { perror("harness: openpty"); return 1; }
    struct termios t;
    tcgetattr(slave, &t);
    cfmakeraw(&t);
    tcsetattr(slave, TCSANOW, &t);
    fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
    char *name = ttyname(slave);
    if (boot_ms > 0) {
        opens_fd = inotify_init1(IN_NONBLOCK);
        if (opens_fd < 0 || inotify_add_watch(opens_fd, name, IN_OPEN) < 0) {
            perror("harness: inotify on the pty");
            return 1;
        }
    }

    pulses = stdout;
    if (pulses_path) {
        pulses = fopen(pulses_path, "w");
        if (!pulses) { perror(pulses_path); return 1; }
    }
    setvbuf(pulses, NULL, _IOLBF, 0);
    printf("PTY %s\n", name);
    fflush(stdout);

    /* UART0 */
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_irq_t *uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_xoff, NULL);

    /* ch2..ch5 are plain port outputs driven by the firmware's ISR */
    for (int ch = 2; ch < NCH; ch++)
        avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(pins[ch].port), pins[ch].bit),
                                on_pin, (void *)(intptr_t)ch);
    /* ch0/ch1 are Timer1's hardware PWM outputs (OC1A = PB1, OC1B = PB2).
     * simavr 1.6 reports them on the timer's compare-output IRQs only; the
     * port pin IRQ of PB1/PB2 follows the PORTB register instead (it reads
     * 0 whenever the firmware writes PORTB), so it is not used for them. */
    for (int comp = 0; comp < 2; comp++)
        avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_TIMER_GETIRQ('1'), TIMER_IRQ_OUT_COMP + comp),
                                on_pin, (void *)(intptr_t)comp);

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, on_reset);

    const avr_cycle_count_t poll_every = freq / 10000;  /* 100 us */
    const avr_cycle_count_t tick_every = freq / 10;     /* 100 ms */
    avr_cycle_count_t next_poll = 0, next_tick = tick_every;
    double wall0 = wall_now();

    while (!stop) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "harness: firmware stopped (state %d) at cycle %llu\n", state,
                    (unsigned long long)avr->cycle);
            break;
        }
        if (now_cycles() < next_poll) continue;
        next_poll = now_cycles() + poll_every;
        if (pty_opened() || reset_pressed) {
            reset_pressed = 0;
            reset_board();
        }

        /* host -> firmware: only once the receiver is on, only while XON */
        if (avr->data[UCSR0B] & (1 << RXEN0)) {
            while (!xoff) {
                if (ppos == npend) {
                    ssize_t n = read(pty_master, pending, sizeof pending);
                    if (n <= 0) break;
                    /* bytes written after an open reach the boot loader:
                     * the open came before them, so it is seen now */
                    if (pty_opened()) {
                        reset_board();
                        break;
                    }
                    npend = (int)n;
                    ppos = 0;
                    log_rx(pending, npend, (double)now_cycles() / freq);
                }
                avr_raise_irq(uart_in, pending[ppos++]);
            }
        }
        if (now_cycles() >= next_tick) {
            next_tick += tick_every;
            fprintf(pulses, "{\"t_sim\":%.6f}\n", (double)now_cycles() / freq);
        }
        if (realtime) {
            double ahead = (double)now_cycles() / freq - (wall_now() - wall0);
            if (ahead > 0.002) usleep((useconds_t)(ahead * 1e6));
        }
    }
    if (tx_dropped) fprintf(stderr, "harness: %lu bytes to the host dropped (pty full)\n", tx_dropped);
    if (pulses != stdout) fclose(pulses);
    close(slave);
    close(pty_master);
    return 0;
}
