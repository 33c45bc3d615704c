//! The terminal's width, as git reads it for the reports it lines up: `COLUMNS` when it holds a
//! positive number, else the width of the terminal on standard output, else 80.

/// The terminal's width in columns.
pub fn columns() -> usize {
    let given = std::env::var("COLUMNS").ok().and_then(|text| {
        // As C's atoi, which git uses: the leading digits.
        let digits: String = text
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<usize>().ok().filter(|n| *n > 0)
    });
    given.or_else(stdout_width).unwrap_or(80)
}

/// The width of the terminal on standard output, if it is one.
fn stdout_width() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points at one.
    let done = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (done == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
