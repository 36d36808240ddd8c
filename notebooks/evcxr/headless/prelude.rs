// scripts/run-notebooks only. evcxr catches a panicking cell, prints the message and
// reports the cell as a success, so the next cells run and the notebook "passes". Ending
// the kernel's child process at the panic makes the cell fail instead, with the message.
std::panic::set_hook(Box::new(|info| {
    eprintln!("{info}");
    std::process::exit(101);
}));
