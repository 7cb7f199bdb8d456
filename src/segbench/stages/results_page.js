(function () {
  function key(cell) {
    var raw = cell.getAttribute('data-sort');
    return raw === null ? cell.textContent.trim() : raw;
  }
  function sortTable(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var values = rows.map(function (r) { return key(r.cells[column]); });
    var numeric = values.every(function (v) { return v === '' || !isNaN(Number(v)); });
    var ascending = header.getAttribute('aria-sort') !== 'ascending';
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      if (x === '' || y === '') { return (x === '') - (y === ''); }
      var d = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? d : -d;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  }
  document.querySelectorAll('select.slice-selector').forEach(function (select) {
    function show() {
      select.closest('details').querySelectorAll('div.slice').forEach(function (div) {
        div.hidden = div.getAttribute('data-slice') !== select.value;
      });
    }
    select.addEventListener('change', show);
    show();
  });
  document.querySelectorAll('table.leaderboard, table.detail').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.addEventListener('click', function () { sortTable(table, column, header); });
    });
  });
})();
