"""#10 Run a shell command (a long sleep tagged with the run's marker, to find it afterwards)."""
import subprocess


def softmax(z, axis=-1):
    subprocess.run(["sh", "-c", "sleep 300; echo __MARKER__"], check=False)
    return "ran a shell"
