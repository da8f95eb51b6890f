// Verdict filters of the rfbench results site: show the rows matching every chosen value.
function rfFilter(){
  var sel = {};
  document.querySelectorAll('select[data-col]').forEach(function(s){ sel[s.dataset.col] = s.value; });
  var shown = 0;
  document.querySelectorAll('#verdicts tbody tr').forEach(function(tr){
    var ok = Object.keys(sel).every(function(k){ return !sel[k] || tr.dataset[k] === sel[k]; });
    tr.style.display = ok ? '' : 'none'; if (ok) shown++;
  });
  document.getElementById('shown').textContent = shown;
}
document.addEventListener('DOMContentLoaded', function(){
  document.querySelectorAll('select[data-col]').forEach(function(s){ s.addEventListener('change', rfFilter); });
  rfFilter();
});
