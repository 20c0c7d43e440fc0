// The copy button beside a secret shown once: hidden without JavaScript, where the field can be
// selected and copied by hand.
const button = document.getElementById('copy-key');
const status = document.getElementById('copy-status');
if (button && navigator.clipboard) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy);
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = 'Copied.';
    } catch {
      field.select();
      status.textContent = 'Select the text and copy it with your keyboard.';
    }
  });
}
