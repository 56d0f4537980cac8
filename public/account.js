// The account screen's one script (served from /account/assets, no inline script): copy and show
// a key by fetching it when asked, copy a webhook's new secret, the "Issue key" form toggle, and the
// revoke confirmation.
const csrfToken = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

async function fetchKey(keyId) {
  const response = await fetch(`/account/keys/${encodeURIComponent(keyId)}/reveal`, {
    method: 'POST',
    headers: { 'X-CSRF-Token': csrfToken },
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!response.ok) throw new Error(`the key could not be fetched (${response.status})`);
  return (await response.json()).key;
}

// Copies what `text()` gives when the button is pressed, and says so beside it for two seconds
// ("Copied", or that it could not).
function copyOnClick(button, text) {
  let timer;
  button.addEventListener('click', async () => {
    const status = button.parentElement.querySelector('.copied');
    try {
      await navigator.clipboard.writeText(await text());
      status.textContent = button.dataset.copied;
      status.classList.remove('failed');
    } catch {
      status.textContent = button.dataset.failed;
      status.classList.add('failed');
    }
    clearTimeout(timer);
    timer = setTimeout(() => {
      status.textContent = '';
    }, 2000);
  });
}

for (const button of document.querySelectorAll('button[data-action="copy"]')) {
  copyOnClick(button, () => fetchKey(button.dataset.keyId));
}

// The Claude Code command with a read key in it (the key fetched as for copying it, never in the page).
for (const button of document.querySelectorAll('button[data-action="copy-mcp"]')) {
  copyOnClick(button, async () =>
    button.dataset.command.replace(button.dataset.slot, await fetchKey(button.dataset.keyId)),
  );
}

// A secret shown once (a new webhook endpoint's), copied from the page: the one answer that holds it.
// Its button shows only where this script runs.
for (const button of document.querySelectorAll('button[data-action="copy-secret"]')) {
  const secret = document.getElementById(button.getAttribute('aria-controls'));
  button.hidden = false;
  copyOnClick(button, async () => secret.textContent.trim());
}

for (const button of document.querySelectorAll('button[data-action="show"]')) {
  button.addEventListener('click', async () => {
    const field = button.closest('td').querySelector('.key');
    if (button.getAttribute('aria-pressed') === 'true') {
      field.textContent = field.dataset.masked;
      button.setAttribute('aria-pressed', 'false');
      button.setAttribute('aria-label', button.dataset.showLabel);
      return;
    }
    try {
      field.textContent = await fetchKey(button.dataset.keyId);
      button.setAttribute('aria-pressed', 'true');
      button.setAttribute('aria-label', button.dataset.hideLabel);
    } catch {
      field.textContent = field.dataset.masked;
    }
  });
}

// Escape hides an icon's tooltip (shown by CSS on hover and focus) until the pointer or focus leaves.
for (const button of document.querySelectorAll('button.icon')) {
  button.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') button.classList.add('tooltip-dismissed');
  });
  for (const type of ['blur', 'mouseleave']) {
    button.addEventListener(type, () => button.classList.remove('tooltip-dismissed'));
  }
}

for (const button of document.querySelectorAll('button[data-action="issue"]')) {
  const form = document.getElementById(button.getAttribute('aria-controls'));
  if (!form) continue;
  form.hidden = true;
  button.setAttribute('aria-expanded', 'false');
  button.addEventListener('click', () => {
    const opening = form.hidden;
    form.hidden = !opening;
    button.setAttribute('aria-expanded', String(opening));
    if (opening) form.querySelector('input[name="label"]')?.focus();
  });
}

const dialog = document.getElementById('revoke-dialog');
for (const form of document.querySelectorAll('form.revoke')) {
  form.addEventListener('submit', (event) => {
    if (!dialog || typeof dialog.showModal !== 'function') return; // the server asks instead
    event.preventDefault();
    dialog.querySelector('#revoke-title').textContent = form.dataset.question;
    dialog.returnValue = '';
    dialog.addEventListener(
      'close',
      () => {
        if (dialog.returnValue !== 'confirm') {
          form.querySelector('button')?.focus();
          return;
        }
        const confirm = document.createElement('input');
        confirm.type = 'hidden';
        confirm.name = 'confirm';
        confirm.value = 'yes';
        form.append(confirm);
        form.submit();
      },
      { once: true },
    );
    dialog.showModal();
  });
}

// After a key was issued, its copy icon has the focus (Enter copies it) and is in view.
const newKeyCopy = document.querySelector('tr.new button[data-action="copy"]');
if (newKeyCopy) {
  newKeyCopy.focus();
  newKeyCopy.scrollIntoView({ block: 'center' });
}
