// A form that takes a while (issuing a month's statements): once sent, its button says what is
// happening and cannot be pressed twice, and the status beside it says so to screen readers too.
// Without JavaScript the form works the same, only without this feedback.
for (const form of document.querySelectorAll('form[data-busy]')) {
  form.addEventListener('submit', () => {
    const button = form.querySelector('button[type="submit"]');
    const status = form.querySelector('[role="status"]');
    if (button) {
      button.disabled = true;
      button.textContent = form.dataset.busy;
    }
    if (status)
      status.textContent = `${form.dataset.busy} This can take a little while; keep this page open.`;
  });
}
